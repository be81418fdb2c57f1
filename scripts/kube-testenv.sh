#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for make test-k8s: etcd,
# kube-apiserver, kube-controller-manager and kube-scheduler, and kwok faking
# one node. Objects go through the real admission (Pod Security included),
# the real Job and Deployment controllers and the real scheduler; kwok moves
# the scheduled pods to Running and Job pods to Succeeded. No container runs.
#
#   scripts/kube-testenv.sh build             build the binaries once (cached), print their folder
#   scripts/kube-testenv.sh run CMD [ARG...]  start the control plane, run CMD with $KUBECONFIG set
#                                             and kubectl first on $PATH, stop everything, exit
#                                             with CMD's status
#
# The run's directory (certificates, etcd's data, the components' logs) is
# removed at the end; LOCKBENCH_KUBE_KEEP=1 keeps it for a look.
#
# Everything comes from the Go module proxy. k8s.io/kubernetes cannot be
# `go install`ed (its go.mod points its staging modules at local paths), so
# a wrapper module generated in the cache requires it and replaces each
# staging module with its published release. The first build compiles for
# about 1,350 CPU-seconds at nice 19 (10-12 min on 2 idle cores, over 20 on
# a busy host; peak 3 GB) and leaves about 470 MB in
# ${LOCKBENCH_KUBE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/lockbench}; later
# runs start the control plane in about 15 s.
set -euo pipefail

readonly KUBE_VERSION=v1.37.2                   # k8s.io/kubernetes
readonly STAGING_VERSION=v0.${KUBE_VERSION#v1.} # its staging modules, as published
readonly ETCD_VERSION=v3.7.3                    # go.etcd.io/etcd/server/v3
readonly KWOK_VERSION=v0.8.0                    # sigs.k8s.io/kwok
readonly BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
readonly CACHE_ROOT=${LOCKBENCH_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lockbench}
# Named by every version in it: a bump builds a new folder beside the old.
readonly BIN=$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION
readonly NODE=kwok-node-0
GO=${GO:-go}

log() { echo "kube-testenv: $*" >&2; }
die() {
	log "$*"
	exit 1
}

# What to undo at exit, however the script ends.
declare -a PIDS=() TEMPS=()
declare -A PID_OF=()
RUN='' CMD_PID='' UP=''

cleanup() {
	local status=$? i name dead=()
	trap - EXIT INT TERM
	set +e
	for name in "${!PID_OF[@]}"; do alive "${PID_OF[$name]}" || dead+=("$name"); done
	# The command runs in a process group of its own (go test and its test
	# binary, say): all of it goes.
	if [ -n "$CMD_PID" ]; then
		kill -TERM -- "-$CMD_PID" 2>/dev/null
		stop "$CMD_PID"
	fi
	# In reverse order of start: each stops while what it talks to is up.
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		kill -TERM "${PIDS[i]}" 2>/dev/null
		stop "${PIDS[i]}"
	done
	# The logs of a control plane that failed to start, or of a component
	# that died under the command: a failing command speaks for itself.
	[ -n "$UP" ] || dead=("${!PID_OF[@]}")
	if ((status != 0)) && [ -n "$RUN" ]; then
		for name in "${dead[@]}"; do
			[ -s "$RUN/logs/$name.log" ] || continue
			log "last lines of $name's log:"
			tail -n 15 "$RUN/logs/$name.log" | sed 's/^/    /' >&2
		done
	fi
	local keep=''
	if [ -n "${LOCKBENCH_KUBE_KEEP:-}" ] && [ -n "$RUN" ]; then
		keep=$RUN
		log "kept $RUN (LOCKBENCH_KUBE_KEEP)"
	fi
	for i in "${TEMPS[@]}"; do [ "$i" = "$keep" ] || rm -rf "$i"; done
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# stop PID: wait for a child told to stop; kill it after 15 s.
stop() {
	local deadline=$((SECONDS + 15))
	while alive "$1" && ((SECONDS < deadline)); do sleep 0.1; done
	alive "$1" && kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# alive: the process exists and is not a zombie waiting to be reaped.
alive() {
	local state
	[ -r "/proc/$1/stat" ] || return 1
	read -r _ _ state _ <"/proc/$1/stat" 2>/dev/null || return 1
	[ "$state" != Z ]
}

cached() {
	[ -f "$BIN/.complete" ] || return 1
	local b
	for b in "${BINARIES[@]}"; do [ -x "$BIN/$b" ] || return 1; done
	[ -d "$BIN/stages" ]
}

# nicego: the go command at the lowest priority, in a module of its own,
# whatever the caller's GOFLAGS or go.work.
nicego() { GOWORK=off GOFLAGS=-mod=mod nice -n 19 "$GO" "$@"; }

build() {
	if cached; then return 0; fi
	command -v "$GO" >/dev/null || die "no Go toolchain ($GO): it builds the control plane from the module proxy"
	mkdir -p "$CACHE_ROOT"
	# One build at a time: a second caller waits, then finds the cache.
	if command -v flock >/dev/null; then
		exec {lock}>"$CACHE_ROOT/.build.lock"
		flock "$lock"
		if cached; then
			exec {lock}>&-
			return 0
		fi
	fi
	local work start=$SECONDS
	work=$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")
	TEMPS+=("$work")
	mkdir "$work/out" "$work/etcd" "$work/kube"
	log "building etcd $ETCD_VERSION, Kubernetes $KUBE_VERSION and kwok $KWOK_VERSION into $BIN"
	log "(once: 10-12 min on 2 idle cores at nice 19; later runs reuse it)"
	# The subshells run under errexit: any failing step fails the build.
	log "etcd: module $work/etcd"

	# etcd's own main modules carry replace directives; a five-line main
	# of ours calls the server's entry point instead.
	(
		cd "$work/etcd"
		nicego mod init lockbench.local/etcd >/dev/null 2>&1
		cat >main.go <<-'EOF'
			package main

			import (
				"os"

				"go.etcd.io/etcd/server/v3/etcdmain"
			)

			func main() { etcdmain.Main(os.Args) }
		EOF
		nicego get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
		nicego mod tidy
		nicego build -trimpath -ldflags='-s -w' -o "$work/out/etcd" .
	)
	log "Kubernetes and kwok: module $work/kube"

	(
		cd "$work/kube"
		nicego mod init lockbench.local/kube >/dev/null 2>&1
		local gomod staging edits=() m
		gomod=$(nicego mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
		[ -f "$gomod" ] || die "go mod download k8s.io/kubernetes@$KUBE_VERSION gave no go.mod"
		# Its replace lines read `k8s.io/x => ./staging/src/k8s.io/x`.
		staging=$(awk '$0 ~ /=> *\.\/staging\// { for (i = 1; i < NF; i++) if ($(i + 1) == "=>") print $i }' "$gomod")
		[ -n "$staging" ] || die "no staging modules in $gomod's replace directives"
		for m in $staging; do edits+=("-replace=$m=$m@$STAGING_VERSION"); done
		log "k8s.io/kubernetes $KUBE_VERSION: $(wc -w <<<"$staging") staging modules replaced by their $STAGING_VERSION releases"
		nicego mod edit -require="k8s.io/kubernetes@$KUBE_VERSION" "${edits[@]}"
		local tools=(
			"k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION"
			"k8s.io/kubernetes/cmd/kube-controller-manager@$KUBE_VERSION"
			"k8s.io/kubernetes/cmd/kube-scheduler@$KUBE_VERSION"
			"k8s.io/kubernetes/cmd/kubectl@$KUBE_VERSION"
			"sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
		)
		nicego get -tool "${tools[@]}"
		# kwok must not have pulled Kubernetes to another version.
		local got
		got=$(nicego list -m -f '{{.Version}}' k8s.io/kubernetes)
		[ "$got" = "$KUBE_VERSION" ] || die "k8s.io/kubernetes resolved to $got, want $KUBE_VERSION"
		# Without a stamped version kubectl reports v0.0.0-master, which
		# its own `version` and version-skew checks cannot parse.
		local minor=${KUBE_VERSION#v1.} ldflags="-s -w" p
		minor=${minor%%.*}
		for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
			ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
		done
		nicego build -trimpath -ldflags="$ldflags" -o "$work/out/" "${tools[@]%@*}"
		# kwok's stage definitions: what a faked node and pod go through.
		local kwokdir
		kwokdir=$(nicego list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
		mkdir "$work/out/stages"
		cp "$kwokdir"/kustomize/stage/node/fast/node-initialize.yaml \
			"$kwokdir"/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
			"$kwokdir"/kustomize/stage/pod/fast/pod-ready.yaml \
			"$kwokdir"/kustomize/stage/pod/fast/pod-complete.yaml \
			"$kwokdir"/kustomize/stage/pod/fast/pod-delete.yaml "$work/out/stages/"
		chmod -R u+w "$work/out/stages"
	)

	local b
	for b in "${BINARIES[@]}"; do [ -x "$work/out/$b" ] || die "the build made no $b"; done
	"$work/out/kubectl" version --client -o yaml | grep -q "gitVersion: $KUBE_VERSION" ||
		die "the built kubectl does not report $KUBE_VERSION"
	touch "$work/out/.complete"
	# The finished folder appears in one rename: a build cut short leaves
	# only a .build.* folder, never a $BIN that looks complete.
	rm -rf "$BIN"
	mv -T "$work/out" "$BIN"
	[ -z "${lock:-}" ] || exec {lock}>&-
	log "built in $((SECONDS - start)) s: $(du -sh "$BIN" | cut -f1) in $BIN"
}

# take_port VAR: a loopback TCP port nothing uses now, below the ephemeral
# range so that no outgoing connection takes it in the meantime.
USED_PORTS=" "
take_port() {
	if [ "$USED_PORTS" = " " ]; then
		local addr
		while read -r _ addr _; do
			[[ $addr == *:* ]] && USED_PORTS+="$((16#${addr##*:})) "
		done < <(grep -hv local_address /proc/net/tcp /proc/net/tcp6 2>/dev/null)
	fi
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		[[ $USED_PORTS == *" $p "* ]] || break
	done
	USED_PORTS+="$p "
	printf -v "$1" %d "$p"
}

# launch NAME CMD...: start a component in the background, its output in
# its log. With setpriv, a component dies with this script even when the
# script is killed outright.
PDEATH=()
if command -v setpriv >/dev/null && setpriv --help 2>&1 | grep -q -- --pdeathsig; then
	PDEATH=(setpriv --pdeathsig KILL --)
fi
launch() {
	local name=$1
	shift
	"${PDEATH[@]}" "$@" >"$RUN/logs/$name.log" 2>&1 &
	PIDS+=($!)
	PID_OF[$name]=$!
}

# ready NAME SECONDS WHAT CHECK...: wait until CHECK succeeds; fail when
# NAME exits first or the time runs out.
ready() {
	local name=$1 secs=$2 what=$3 start=$SECONDS
	shift 3
	until "$@" >/dev/null 2>&1; do
		alive "${PID_OF[$name]}" || die "$name exited while starting (its log is below)"
		((SECONDS - start < secs)) || die "$name: no $what after ${secs}s (its log is below)"
		sleep 0.5
	done
	log "$name: $what after $((SECONDS - start)) s"
}

make_certs() {
	local d=$1
	cat >"$d/openssl.cnf" <<-'EOF'
		[req]
		distinguished_name = dn
		[dn]
		[ca]
		basicConstraints = critical, CA:TRUE
		keyUsage = critical, keyCertSign, cRLSign
		[server]
		basicConstraints = CA:FALSE
		keyUsage = critical, digitalSignature
		extendedKeyUsage = serverAuth
		subjectAltName = IP:127.0.0.1, IP:10.0.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc
		[client]
		basicConstraints = CA:FALSE
		keyUsage = critical, digitalSignature
		extendedKeyUsage = clientAuth
	EOF
	# Chained with &&: errexit does not hold where a status is tested.
	local ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
	(
		cd "$d" &&
			openssl req -x509 -config openssl.cnf -extensions ca "${ec[@]}" -keyout ca.key -out ca.crt \
				-days 7 -subj /CN=lockbench-test-ca &&
			# kube-apiserver serving, and the admin (system:masters) client.
			openssl req -new -config openssl.cnf "${ec[@]}" -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver &&
			openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -set_serial 2 -days 7 \
				-extfile openssl.cnf -extensions server -out apiserver.crt &&
			openssl req -new -config openssl.cnf "${ec[@]}" -keyout admin.key -out admin.csr -subj /O=system:masters/CN=lockbench-admin &&
			openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -set_serial 3 -days 7 \
				-extfile openssl.cnf -extensions client -out admin.crt &&
			# Service account tokens are signed with sa.key.
			openssl ecparam -name prime256v1 -genkey -noout -out sa.key &&
			openssl ec -in sa.key -pubout -out sa.pub
	) >"$d/openssl.log" 2>&1 || {
		cat "$d/openssl.log" >&2
		die "openssl could not make the test certificates"
	}
}

node_ready() {
	[ "$(kubectl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

run() {
	(($# > 0)) || die "run: no command given"
	local tool
	for tool in openssl curl; do command -v "$tool" >/dev/null || die "$tool is missing: install it (apt-get install -y $tool)"; done
	build
	# What a killed run left (its components died with it): its directory.
	local old
	for old in "${TMPDIR:-/tmp}"/lockbench-kube.*; do
		if [ -O "$old/owner" ] && ! kill -0 "$(cat "$old/owner")" 2>/dev/null; then rm -rf "$old" || true; fi
	done
	RUN=$(mktemp -d "${TMPDIR:-/tmp}/lockbench-kube.XXXXXX")
	TEMPS+=("$RUN")
	echo $$ >"$RUN/owner"
	mkdir -p "$RUN/pki" "$RUN/logs" "$RUN/etcd" "$RUN/kcm" "$RUN/scheduler"
	chmod 700 "$RUN/etcd"
	make_certs "$RUN/pki"
	local pki=$RUN/pki kc=$RUN/admin.kubeconfig etcd_port peer_port api_port kcm_port sched_port
	take_port etcd_port
	take_port peer_port
	take_port api_port
	take_port kcm_port
	take_port sched_port
	cat >"$kc" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		  - name: lockbench-test
		    cluster:
		      server: https://127.0.0.1:$api_port
		      certificate-authority: $pki/ca.crt
		users:
		  - name: admin
		    user:
		      client-certificate: $pki/admin.crt
		      client-key: $pki/admin.key
		contexts:
		  - name: lockbench-test
		    context: {cluster: lockbench-test, user: admin}
		current-context: lockbench-test
	EOF
	export KUBECONFIG=$kc PATH=$BIN:$PATH

	# The data is thrown away at the end: no fsync.
	launch etcd "$BIN/etcd" --name lockbench --data-dir "$RUN/etcd" --unsafe-no-fsync \
		--listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "lockbench=http://127.0.0.1:$peer_port"
	ready etcd 60 "/health ok" curl -fsS "http://127.0.0.1:$etcd_port/health"

	# Advertising 127.0.0.1 needs --endpoint-reconciler-type=none: the
	# kubernetes Service's endpoints may not be a loopback address.
	launch kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
		--endpoint-reconciler-type none \
		--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
		--service-cluster-ip-range 10.0.0.0/24 --authorization-mode Node,RBAC --allow-privileged=false
	ready kube-apiserver 180 "/readyz ok" kubectl get --raw /readyz

	launch kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$kc" \
		--authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
		--bind-address 127.0.0.1 --secure-port "$kcm_port" --cert-dir "$RUN/kcm" --leader-elect=false \
		--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --use-service-account-credentials
	launch kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$kc" \
		--authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
		--bind-address 127.0.0.1 --secure-port "$sched_port" --cert-dir "$RUN/scheduler" --leader-elect=false
	ready kube-controller-manager 120 "/healthz ok" curl -fsSk "https://127.0.0.1:$kcm_port/healthz"
	ready kube-scheduler 120 "/healthz ok" curl -fsSk "https://127.0.0.1:$sched_port/healthz"
	# The service account controller at work: pods need their namespace's
	# default ServiceAccount.
	ready kube-controller-manager 120 "default ServiceAccount" kubectl get serviceaccount default -n default

	local stages=() f
	for f in "$BIN"/stages/*.yaml; do stages+=(-c "$f"); done
	# The heartbeat stage leaves the node's liveness to its Lease: without
	# one, the node would drop to NotReady (and be tainted) every minute.
	launch kwok "$BIN/kwok" --kubeconfig "$kc" "${stages[@]}" --manage-all-nodes=false \
		--manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
		--cidr 10.244.0.0/16 --node-ip 10.240.0.1 --node-lease-duration-seconds 40
	# Room for every pod deploy/k8s makes at once.
	kubectl apply -f - >/dev/null <<-EOF
		apiVersion: v1
		kind: Node
		metadata:
		  name: $NODE
		  annotations: {kwok.x-k8s.io/node: fake}
		  labels: {kubernetes.io/hostname: $NODE, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
		status:
		  allocatable: {cpu: "32", memory: 128Gi, pods: "110"}
		  capacity: {cpu: "32", memory: 128Gi, pods: "110"}
	EOF
	ready kwok 120 "node $NODE Ready" node_ready
	log "control plane up: Kubernetes $KUBE_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION node $NODE; KUBECONFIG=$kc"
	UP=1

	# In the background, so that INT and TERM reach the trap at once, and
	# in a process group of its own, so that the trap can stop all of it.
	setsid "${PDEATH[@]}" "$@" &
	CMD_PID=$!
	local status=0
	wait "$CMD_PID" || status=$?
	CMD_PID=
	return "$status"
}

case ${1:-} in
build)
	build
	echo "$BIN"
	;;
run)
	shift
	run "$@"
	;;
*)
	echo "usage: $0 build | run CMD [ARG...]" >&2
	exit 2
	;;
esac
