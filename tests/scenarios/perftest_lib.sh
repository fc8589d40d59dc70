# Sourced by the perftest_* scenarios (not a scenario itself).
#
# perftest_cases CASE...: each CASE is "SERVER TOOL ARGS..." (SERVER a|b):
# the guest SERVER runs TOOL ARGS on rxe0 and the other connects to it with
# the same options; the client's result line (message size then the
# iteration count given with -n) must be printed and both sides must exit 0.
# Cases run one after the other, each on its own port. The scenario's exit
# status is perftest_cases's.

# perftest_listening ARGS PORT: the server listens on PORT: an RDMA CM ID
# (with -R) or a TCP socket (perftest's own exchange). Under KASAN a server
# takes more than a second to open the device before it listens; a client
# that comes too early is rejected, and perftest's retry after a reject can
# crash in librdmacm.
perftest_listening() {
	case " $1 " in
	*" -R "*) rdma resource show cm_id 2>/dev/null | grep -Eq "LISTEN.*:$2( |$)" ;;
	*) tcp_listening "$2" ;;
	esac
}

perftest_cases() {
	local c server tool args port=18600 n=0 rc=0 ok pid i iters out t0 try
	local idx
	idx=$(gid_index_v4 rxe0 "$MYIP") || { echo "no RoCE v2 GID"; return 1; }
	for c in "$@"; do
		n=$((n + 1))
		port=$((port + 1))
		set -- $c
		server=$1 tool=$2
		shift 2
		# With -R, librdmacm picks the GID.
		case " $* " in
		*" -R "*) args="-d rxe0 -F $* -p $port" ;;
		*) args="-d rxe0 -x $idx -F $* -p $port" ;;
		esac
		iters=$(echo " $* " | sed -n 's/.* -n \([0-9]*\) .*/\1/p')
		if [ "$ROLE" = "$server" ]; then
			timeout 100 $tool $args >"server.$n" 2>&1 &
			pid=$!
			i=0
			# The CM ID may not be listed (no rdma tool, an older format):
			# 10 s at most then.
			case " $* " in *" -R "*) i=100 ;; esac
			while ! perftest_listening "$*" $port && kill -0 $pid 2>/dev/null && [ $i -lt 150 ]; do
				sleep 0.2
				i=$((i + 1))
			done
			[ $i -lt 150 ] || echo "== $n: $tool not seen listening on $port"
			sleep 0.5
			notify "ready.$n"
			await "done.$n" 130 || rc=1
			if wait $pid; then
				echo "== $n server ok: $tool $*"
			else
				echo "== $n server FAILED: $tool $*"
				cat "server.$n"
				rc=1
			fi
		else
			await "ready.$n" 130 || { rc=1; continue; }
			ok=0
			t0=$(date +%s%N)
			: >"client.$n"
			for try in 1 2 3; do
				if timeout 100 $tool $args "$PEERIP" >>"client.$n" 2>&1; then
					ok=1
					break
				fi
				sleep 1
			done
			out=$(grep -E "^ *[0-9]+ +$iters( |$)" "client.$n" | head -n1)
			if [ $ok = 1 ] && [ -n "$out" ]; then
				echo "== $n PASS $tool $* (server $server, $(( ($(date +%s%N) - t0) / 1000000 )) ms wall clock):"
				echo "$out"
			else
				echo "== $n FAIL $tool $* (server $server, try $try):"
				cat "client.$n"
				rc=1
			fi
			notify "done.$n"
		fi
	done
	return $rc
}
