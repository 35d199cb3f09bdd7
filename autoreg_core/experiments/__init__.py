"""What the lessons compute on the engine, each function returning every intermediate a page may draw."""
