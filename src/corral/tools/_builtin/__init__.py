"""_builtin"""
