"""_runtime"""
