"""Paths in answers, as a typed value (:class:`AnswerPath`, defined with
the refusals, which name paths too)."""

from __future__ import annotations

from .._refusals.answer_path import AnswerPath, naming_root, sentence_path

__all__ = ["AnswerPath", "naming_root", "sentence_path"]
