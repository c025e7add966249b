#!/bin/sh
# Start Redis with the users of redis-users.acl, each given its password from the
# environment (URL-safe characters: they also go into REDIS_URL). Comment lines are
# dropped (Redis's ACL files have none). The filled-in ACL file is written where only
# this user can read it; extra arguments go to redis-server.
set -eu
: "${REDIS_GATEWAY_PASSWORD:?set REDIS_GATEWAY_PASSWORD}"
: "${REDIS_RUNNER_PASSWORD:?set REDIS_RUNNER_PASSWORD}"
template="${REDIS_ACL_TEMPLATE:-/etc/kionga/redis-users.acl}"
acl="${REDIS_ACL_FILE:-/tmp/redis-users.acl}"
umask 077
sed -e '/^#/d' -e "s|^user gateway on |user gateway on >${REDIS_GATEWAY_PASSWORD} |" \
    -e "s|^user runner on |user runner on >${REDIS_RUNNER_PASSWORD} |" \
    "$template" > "$acl"
exec redis-server --aclfile "$acl" "$@"
