"""The ``st.session_state`` keys of the how servers go fast lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
from autoreg_ui.keys import JobKeys

SRV_PAGE = "srv"  # prefix of the shared step buttons' keys on this page
SRV_LIVE_REFRESH = "srv_live_refresh"  # the live panel's "Update every 5 s" switch
SRV_LIVE_CHART = "srv_live_chart"
SRV_OWN_REQUESTS = "srv_own_requests"  # the live panel's "Send … requests of my own" button (offered to a tab alone)
SRV_OWN_KEPT = "srv_own_kept"  # kept: (model name, what the batcher did with those requests)
SRV_CHART = "srv_chart"  # prefix of every chart on the page (one suffix per chart)
SRV_BATCH_MAX = "srv_batch_max"
SRV_BATCH = JobKeys("srv_batch")  # kept: the batching sweep (points arrive while it runs)
SRV_QUEUE_REQUESTS = "srv_queue_requests"
SRV_QUEUE_SLOTS = "srv_queue_slots"
SRV_QUEUE_LONGEST = "srv_queue_longest"
SRV_QUEUE = JobKeys("srv_queue")  # kept: static and continuous runs of the same queue
SRV_REQUEST_TABLE = "srv_request_table"
SRV_SPEC_DRAFTS = "srv_spec_drafts"
SRV_SPEC_LAYERS = "srv_spec_layers"
SRV_SPEC_K = "srv_spec_k"
SRV_SPEC_MAX_NEW = "srv_spec_max_new"
SRV_SPEC_SAMPLING = "srv_spec_sampling"
SRV_SPEC = JobKeys("srv_spec")  # kept: plain vs speculative runs on the two prompts
SRV_SPEC_ROUNDS = "srv_spec_rounds"  # prefix: one rounds table/chart per prompt and draft
SRV_PREC = JobKeys("srv_prec")  # kept: the precision table
SRV_DIAL_GROUPING = "srv_dial_grouping"
SRV_DIAL = JobKeys("srv_dial")  # kept: one dial curve per grouping, under f"{SRV_DIAL.kept}_{grouping}"
