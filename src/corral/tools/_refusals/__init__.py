"""_refusals"""
