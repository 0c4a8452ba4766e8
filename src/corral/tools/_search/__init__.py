"""_search"""
