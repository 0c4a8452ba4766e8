"""_read"""
