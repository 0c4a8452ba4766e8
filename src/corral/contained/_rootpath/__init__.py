"""RootPath: pathlib.Path inside a root, each operation through the Root."""
