"""The deployment: a container recipe, replicas behind HAProxy, PostgreSQL, and ``check`` (the replicas checked
on this machine)."""
