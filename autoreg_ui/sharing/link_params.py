"""Link parameters a lesson declares for its own page (``?layer=3&head=mean`` on the attention page).

A lesson that reads parameters of its own from a link declares them in ``autoreg_ui/lessons/<lesson>/
link_params.py`` as ``LINK_PARAMS``: their names, the session keys of the widgets they set, and how a value is
read. The page registry names the lesson of every page, so the declarations are found from it (the way a web
framework finds each app's admin module), and ``sharing/`` never names a lesson or its keys: the codec knows the
names as parameters of this app (``link_codec.is_known``), and ``links.apply_page_params`` sets the widgets.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
from dataclasses import dataclass

from autoreg_ui import site_pages


@dataclass(frozen=True)
class IndexParam:
    """A link parameter that picks one of ``n`` (a layer, a head): ``?name=3`` sets the widget under ``key``;
    ``allow_mean``: 'mean' (or 'avg', 'average') picks the mean of them all (``link_codec.MEAN``)."""

    name: str
    key: str
    allow_mean: bool = False


@dataclass(frozen=True)
class PageLinkParams:
    """A page's own link parameters, and the key that remembers the link last applied (a link is read once, so
    moving a slider afterwards is not undone by the URL still carrying it)."""

    seen_key: str
    params: tuple[IndexParam, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(param.name for param in self.params)


MODULE = "link_params"  # the module of a lesson package that declares LINK_PARAMS


@functools.cache
def declared() -> dict[str, PageLinkParams]:
    """Page url path → its lesson's declared link parameters (pages whose lesson declares none are left out)."""
    found = {}
    for url_path, package in site_pages.lesson_packages().items():
        name = f"{package}.{MODULE}"
        if importlib.util.find_spec(name) is not None:
            found[url_path] = importlib.import_module(name).LINK_PARAMS
    return found


@functools.cache
def names() -> frozenset[str]:
    """Every parameter name some lesson declares: parameters of this app, kept in the URL."""
    return frozenset(name for page in declared().values() for name in page.names)

