"""Many sessions sharing one model on a server: the cross-tab batcher, the forward-slot limiter, the prefix cache.

The engine never imports this wing: the server hands a ``Session`` the runtime's pass function and prefill cache."""
