"""What the bench scenarios and ``deploy/check`` share: a websocket client that is a browser tab to the server,
local servers started and stopped, the hooks a server carries inside it (run timer, profilers, leak probe) and their
logs, statistics, profiles read back, the goals, the solo decode step the class is read against, and a throwaway
PostgreSQL."""
