"""Write a file of 64 MiB into the working directory."""

with open("huge.bin", "wb") as handle:
    for _ in range(64):
        handle.write(b"\0" * (1024 * 1024))
