"""Allocate without bound (unhandled MemoryError when the limit is hit)."""

hoard = []
while True:
    hoard.append(bytearray(16 * 1024 * 1024))
