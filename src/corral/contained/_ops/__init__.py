"""The surface operations of a Root, each in the module doing its work."""
