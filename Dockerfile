# The lockbench image: static bench and chaos on an empty base, so it
# builds with no base image to pull. `make image` lays out bin/image/
# (scripts/image-context.sh) and builds it. The chaos suite starts
# redis-server processes of its own, which this image lacks: the nightly
# CronJob uses deploy/chaos.Dockerfile instead.
FROM scratch
COPY bin/image/bench bin/image/chaos /
# For rediss:// URLs: the CAs of the machine that built the image.
COPY bin/image/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
USER 65532:65532
ENTRYPOINT ["/bench"]
