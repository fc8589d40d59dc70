# cmtime -c N: RDMA CM connection setup and teardown timing (every step).
# N is 50 (the ucma and ib_cm issues' figure) when a guest runs this
# project's rdma_ucm or ib_cm (the ucma, ucma-mixed, cm, cm-mixed and full
# sets), 20 elsewhere; CMTIME_CONNS (RRXE_GUEST_ENV) overrides it.
if [ -z "${CMTIME_CONNS:-}" ]; then
	CMTIME_CONNS=20
	case " $MYSET $PEERSET " in
	*" ucma "* | *" cm "* | *" full "*) CMTIME_CONNS=50 ;;
	esac
fi
if [ "$ROLE" = a ]; then
	timeout 200 cmtime -b "$MYIP" -c "$CMTIME_CONNS" &
	srv=$!
	sleep 1
	notify ready
	await done 240
	kill $srv 2>/dev/null
	wait $srv
	exit 0
else
	await ready 60 || exit 1
	start=$(date +%s)
	timeout 180 cmtime -s "$PEERIP" -c "$CMTIME_CONNS" >cmtime.out 2>&1; rc=$?
	cat cmtime.out
	echo "cmtime -c $CMTIME_CONNS: rc $rc in $(($(date +%s) - start)) s"
	notify done
	[ $rc = 0 ] && grep -q 'connect' cmtime.out
fi
