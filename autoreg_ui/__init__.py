"""autoreg_ui: everything a person sees. ``lessons/<lesson>/`` holds one lesson each (controller, text,
figures, questions); ``classroom/`` is class mode; ``sharing/`` is links, session files, the hand-out and
presenter mode; the modules at this level are what every lesson uses (charts, controls, state, keys, ...)."""
