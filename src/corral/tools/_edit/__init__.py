"""_edit"""
