# Arena server image: `docker compose up` runs it against PostgreSQL (see docker-compose.yml).
#
# The server runs as root so that the autograder's sandbox (bubblewrap, installed with Arena,
# and libseccomp, part of the base image) runs each worker slot's programs under a uid of its
# own: 64000 and up; student programs never run as root. The container that grades must be privileged for the
# namespaces: in docker-compose.yml that is the `arena worker` containers (the servers queue
# uploads for them and need no privilege); a lone `arena serve` (role all) that is not
# privileged still serves matches and tournaments and refuses uploads with GRADER_UNAVAILABLE.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY games ./games
COPY bots ./bots
COPY protocol ./protocol
COPY client ./client
COPY server ./server
COPY competition ./competition
COPY autograder ./autograder
COPY sandbox ./sandbox
COPY cli ./cli
# Every compiled module of the core (the checkers rules and search, Connect Four) is compiled
# here, once, into root's cache (~/.cache/arena/numba, bots/core/cache.py), so the container's
# first search, count or solve starts at once.
RUN pip install --no-cache-dir . \
    && mkdir -p /var/lib/arena/grader /var/lib/arena/hosted \
    && chmod 0700 /var/lib/arena/grader /var/lib/arena/hosted \
    && python -c "from bots.core import MODULES, load; [load(name, print) for name in MODULES]"
# Students' programs run with the image's interpreter (readable by every uid).
# Hosted bots' files: the servers keep the uploads, the workers run them in tournaments.
ENV ARENA_GRADER_PYTHON=/usr/local/bin/python3 \
    ARENA_GRADER_DIR=/var/lib/arena/grader \
    ARENA_HOSTED_DIR=/var/lib/arena/hosted
VOLUME /var/lib/arena/grader /var/lib/arena/hosted
EXPOSE 8000
CMD ["arena", "serve", "--host", "0.0.0.0", "--port", "8000"]
