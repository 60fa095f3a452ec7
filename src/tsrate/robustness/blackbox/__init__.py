"""Rating a model tsrate cannot run: export its inputs, import its predictions."""
