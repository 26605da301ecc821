# Arena server image: `docker compose up` runs it against PostgreSQL (see docker-compose.yml).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY games ./games
COPY bots ./bots
COPY protocol ./protocol
COPY server ./server
COPY tournament ./tournament
COPY grader ./grader
COPY cli ./cli
RUN pip install --no-cache-dir . && useradd --create-home arena
USER arena
EXPOSE 8000
CMD ["arena", "serve", "--host", "0.0.0.0", "--port", "8000"]
