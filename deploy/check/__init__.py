"""Two autoreg replicas behind HAProxy on this machine: are students spread, does each stay put, and does
every member of a class reach the replica that holds the class?

    python -m deploy.check [--students 6] [--clicks 3] [--class-students 4]
    python -m deploy.check --class-db postgres

Starts two ``streamlit run app.py`` replicas sharing one cookie secret, each with its own class file
(``AUTOREG_CLASS_DB``) and its own class-code tag (``AUTOREG_REPLICA_TAG``: A on r1, B on r2), HAProxy in
front of them with the cookie affinity and class routing of ``deploy/haproxy.cfg``, then opens one
headless-Chromium context per student. Each student presses Next token a few times (a click that reached the
other replica would find no session there: the token count would start again from 1), then opens the History
tab and downloads the history CSV twice, which only the replica that made it can serve over plain HTTP (each
download is a request of its own for the balancer to route).

Then the class check (``--class-students N``, 0 skips it), twice: a teacher starts a class through the
balancer, N fresh student contexts (no cookie) and one that already holds the other replica's cookie open the
join link the teacher's page shows and join, the teacher steps twice, and each student's Class page must show
the teacher's tokens. Which replica served a tab is read from the balancer itself: this check's copy of the
config adds a response header naming the server (``X-Autoreg-Server``), read from the join page's response
and from the websocket handshake (the Streamlit session lives on the replica at the other end of that
websocket); the ``AUTOREG_REPLICA`` cookie is reported beside it. The second teacher is a fresh tab whose
first request landed on the other replica, so the second class's code carries the other tag: both classes
staying whole shows routing by the code, not luck.

``--without-affinity`` drops the cookie rules and ``--without-class-routing`` the class rules (``ignore-persist``,
``use-server`` and the class link's Set-Cookie), to show what breaks without them. Prints JSON: which replica each
student landed on, the token counts each saw, the downloads, the classes (per student: the replica, joined or refused,
the teacher's tokens seen or not) and the verdicts; a step that does not happen in time (the page changed?) ends the
check within seconds, named in ``failed_step`` (exit 1). Everything runs on 127.0.0.1, is bounded in count and time,
and stops its processes by itself.
"""
