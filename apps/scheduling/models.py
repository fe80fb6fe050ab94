"""Requests, queues, reservations and preemption proposals (a later issue fills this in)."""
