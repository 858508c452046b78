"""Blinded expert trust-scoring sessions."""
