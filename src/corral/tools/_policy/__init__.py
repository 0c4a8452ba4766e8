"""_policy"""
