"""Method adapters behind one contract (engine.methods.base.Method) and their registry."""
