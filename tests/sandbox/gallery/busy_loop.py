"""Loop forever, burning CPU."""

while True:
    pass
