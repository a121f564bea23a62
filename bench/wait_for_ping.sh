# Sourced by the bench shell scripts. wait_for_ping PORT WHAT: waits up to about 4 s for
# the server on 127.0.0.1:PORT to answer PING, and exits 1 saying that WHAT did not start.
wait_for_ping() {
    tries=0
    while ! redis-cli -p "$1" ping > /dev/null 2>&1; do
        tries=$((tries + 1))
        [ "$tries" -lt 200 ] || { echo "$2 did not start"; exit 1; }
        sleep 0.02
    done
}
