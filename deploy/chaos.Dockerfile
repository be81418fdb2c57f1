# The chaos CronJob's image: chaos on the redis:7.4 image, whose
# redis-server the suite starts, pauses, kills and fails over. It needs
# that base image from a registry: `make image-chaos` where one can be
# pulled (not on a machine without a registry).
FROM redis:7.4
COPY bin/image/chaos /chaos
COPY bin/image/bench /bench
USER 65532:65532
ENTRYPOINT ["/chaos"]
