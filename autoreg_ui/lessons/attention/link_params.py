"""The attention page's own link parameters: ``?layer=3&head=mean`` opens it on that layer and head.

Declared here, with the keys of the widgets they set, so the link code reads them from the page registry
(``autoreg_ui.sharing.link_params``) and never names this lesson's keys.
"""
from autoreg_ui.lessons.attention import keys
from autoreg_ui.sharing.link_params import IndexParam, PageLinkParams

LINK_PARAMS = PageLinkParams(keys.ATT_LINK_SEEN, (IndexParam("layer", keys.ATT_LAYER),
                                                  IndexParam("head", keys.ATT_HEAD, allow_mean=True)))


def apply(query, state, n_layers: int, n_heads: int) -> list[str]:
    """Set the layer slider and the head box from the link, once per distinct link (the warnings, if any)."""
    from autoreg_ui.sharing.links import apply_page_params

    return apply_page_params(query, state, LINK_PARAMS, {"layer": n_layers, "head": n_heads})
