"""Optional adapters between tessel and other frameworks. Each is imported on its own and never
by ``import tessel``; their framework dependencies are imported only when used."""
