/*
 * The kernel's surface: entry points that local privilege escalations
 * of 2024-2026 went through, which fence-probe tries to reach from
 * inside a fence (its "surface" section) and the prober judges as the
 * boundary's axis "surface" (docs/probe.md, "The kernel surface").
 *
 * One table, read by both: the probe names each outcome by its id, the
 * prober knows no other id (a report naming one is malformed) and wants
 * every one of them.  Each entry says how the probe tries it (a real
 * attempt that only opens or creates something and closes it again)
 * and why it is on the list: example CVE ids only where they are
 * certain, else the kind of bug.  A new entry goes at the end, with its
 * line in docs/probe.md and its try in probe/probe_priv.c.
 */
#ifndef SURFACE_H
#define SURFACE_H

#define SURFACE_ID_LEN		16	/* the longest id and its NUL */

/* X(enum name, id, how it is tried, why it is listed) */
#define SURFACE_TABLE(X)						\
	X(SURFACE_AF_ALG, "af_alg",					\
	    "socket(AF_ALG), bind hash sha256, accept, splice 1 byte "	\
	    "from a pipe into it",					\
	    "the kernel's crypto API to any user; page-cache pages "	\
	    "spliced into its in-place algorithms (2026 reports)")	\
	X(SURFACE_IO_URING, "io_uring",					\
	    "io_uring_setup() of 1 entry (the privileges call)",	\
	    "example: CVE-2024-0582 (buffer ring use-after-free); "	\
	    "its operations also pass by seccomp")			\
	X(SURFACE_NF_TABLES, "nf_tables",				\
	    "in a new user and network namespace where one can be "	\
	    "made, NFT_MSG_GETGEN on a NETLINK_NETFILTER socket",	\
	    "example: CVE-2024-1086 (nft_verdict_init use-after-free),"	\
	    " reached as root of a user namespace's own network")	\
	X(SURFACE_RDS, "rds",						\
	    "socket(AF_RDS, SOCK_SEQPACKET)",				\
	    "example: CVE-2024-23849 (rds_recv_track_latency "		\
	    "out-of-bounds)")						\
	X(SURFACE_VSOCK, "vsock",					\
	    "socket(AF_VSOCK, SOCK_STREAM)",				\
	    "example: CVE-2025-21756 (vsock socket use-after-free on "	\
	    "rebinding)")						\
	X(SURFACE_ESP, "esp",						\
	    "as nf_tables, XFRM_MSG_GETSPDINFO on a NETLINK_XFRM "	\
	    "socket: the ESP states are made there",			\
	    "ESP's in-place decryption of spliced page-cache pages "	\
	    "(2026 reports)")						\
	X(SURFACE_RXRPC, "rxrpc",					\
	    "socket(AF_RXRPC, SOCK_DGRAM, PF_INET)",			\
	    "RxRPC's in-place decryption of spliced page-cache pages "	\
	    "(2026 reports); a rarely used family")			\
	X(SURFACE_KEYCTL, "keyctl",					\
	    "KEYCTL_GET_KEYRING_ID of the session keyring (the "	\
	    "privileges call)",						\
	    "keyrings are not namespaced; user key payloads shape the "	\
	    "heap in public exploits")					\
	X(SURFACE_BPF, "bpf",						\
	    "bpf(BPF_MAP_CREATE) of an array of 1 entry",		\
	    "the verifier and its maps; closed to unprivileged users "	\
	    "by kernel.unprivileged_bpf_disabled")			\
	X(SURFACE_PERF_EVENT, "perf_event",				\
	    "perf_event_open() of a software counter on itself (the "	\
	    "privileges call)",						\
	    "example: CVE-2023-6931 (read_format heap overflow, "	\
	    "December 2023)")						\
	X(SURFACE_USERFAULTFD, "userfaultfd",				\
	    "userfaultfd() that may handle kernel faults, else "	\
	    "/dev/userfaultfd",						\
	    "stops the kernel in a copy at will: the tool that wins "	\
	    "the races of many exploits")				\
	X(SURFACE_USERNS, "userns",					\
	    "unshare(CLONE_NEWUSER) (the privileges call)",		\
	    "every capability inside it, and with them nf_tables, "	\
	    "xfrm and the rest of the network stack's root paths")	\
	X(SURFACE_PTRACE, "ptrace",					\
	    "PTRACE_ATTACH of a process it forked (not its parent)",	\
	    "reading and changing another process of the same uid")

enum surface_entry {
#define SURFACE_ENUM(e, id, how, why)	e,
	SURFACE_TABLE(SURFACE_ENUM)
#undef SURFACE_ENUM
	SURFACE_MAX
};

#endif /* SURFACE_H */
