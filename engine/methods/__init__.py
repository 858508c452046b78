"""Method adapters behind one contract (srtui.engine.methods.base.Method) and their registry."""
