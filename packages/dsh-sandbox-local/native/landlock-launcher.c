/*
 * landlock-launcher — confine one command with Landlock, then exec it.
 *
 *   landlock-launcher [--min-abi N] [--rw DIR]... [--deny-net] [--freeze-metadata]
 *                     [--sockets none|unix|unix+inet|tcp] [--allow-tcp-connect PORT]
 *                     [--bridge PORT:SOCKET] [--proxy-env] [--setenv NAME VALUE]... [--seccomp-only]
 *                     -- CMD [ARG]...
 *   landlock-launcher --abi          print the kernel's Landlock ABI and exit 0
 *
 * What the confined command gets:
 *   - read + execute everywhere (beneath "/"), write nowhere except beneath each
 *     --rw directory and the /dev/null sink (a file rule);
 *   - REFER (ABI 2) so links/renames across the boundary fail with EXDEV,
 *     TRUNCATE (ABI 3) so truncate(2) outside the roots fails, IOCTL_DEV (ABI 5)
 *     so device ioctls are limited to the tty/null/random nodes;
 *   - signal scoping (ABI 6): no signals to processes outside the sandbox;
 *   - --deny-net: TCP bind/connect denied (ABI 4, no allowed ports), abstract
 *     unix sockets scoped (ABI 6), and a seccomp filter refusing socket(2) for
 *     every family (UDP, raw, netlink, and AF_UNIX: a connect() to a host
 *     socket file is out of Landlock's reach) and io_uring; socketpair(2) stays;
 *   - PR_SET_NO_NEW_PRIVS, root-privilege securebits locked (when CAP_SETPCAP
 *     is held), every capability dropped (bounding set up to
 *     /proc/sys/kernel/cap_last_cap, ambient, effective/permitted/inheritable);
 *   - its own session (setsid), so it cannot reach the caller's terminal;
 *   - ptys: /dev/ptmx and everything beneath /dev/pts (and /dev/tty) are
 *     readable, writable and take ioctls, nothing else under /dev but /dev/null;
 *   - --setenv NAME VALUE: set in the command's environment (TMPDIR), so the
 *     argv is self-sufficient;
 *   - --sockets: which socket(2) families seccomp allows: none (--deny-net),
 *     unix (AF_UNIX only: bwrap's network deny, where a network namespace and
 *     masked socket files already cut the rest), unix+inet (AF_UNIX, AF_INET,
 *     AF_INET6: an allow-list inside a network namespace holding only the
 *     proxy bridge), tcp (AF_INET/AF_INET6 stream sockets only: the plain
 *     Landlock allow-list, where Landlock limits TCP connect to one port);
 *   - --allow-tcp-connect PORT: Landlock (ABI 4) denies every TCP bind and
 *     every connect except to PORT;
 *   - --bridge PORT:SOCKET: listen on 127.0.0.1:PORT (0: a free port; inside
 *     the command's network namespace under bwrap) and relay each connection
 *     to the UNIX socket SOCKET (the provider's filtering proxy). The relay is
 *     forked before the command's seccomp filter and gets its own (AF_UNIX
 *     only); with Landlock's TCP rules the bridge port is the one port the
 *     command may connect to;
 *   - --proxy-env: point HTTP_PROXY/HTTPS_PROXY/ALL_PROXY (both cases) at the
 *     bridge and set NO_PROXY=localhost,127.0.0.1,::1;
 *   - --seccomp-only: no Landlock ruleset (bwrap governs files), only
 *     no_new_privs, the capability drop and the seccomp filter;
 *   - the launcher stays as the command's parent and a child subreaper: when
 *     the command exits, every process left of its tree (background jobs,
 *     double forks, setsid) is killed and reaped, then the launcher exits with
 *     the command's status (or re-raises its signal). SIGHUP, SIGINT, SIGQUIT,
 *     SIGTERM, SIGUSR1, SIGUSR2 and SIGWINCH sent to the launcher are forwarded
 *     to the command.
 *
 * Fail closed: on any setup failure it prints ONE line starting with
 * "landlock-launcher:" to stderr and exits with LAUNCHER_SETUP_FAILED (121),
 * never running the command. If exec itself fails (after confinement) it exits
 * 127 (not found) or 126 (other), like a shell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>

#define LAUNCHER_SETUP_FAILED 121

/* Landlock UAPI, defined here so an old <linux/landlock.h> cannot hide ABI 3+. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)

#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

/* Rights that apply to a regular file or device (not only to directories). */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

#define MAX_RW_ROOTS 64
#define MAX_SETENV 16

/* Which socket(2) calls the seccomp filter lets through. */
enum socket_policy { SOCKETS_ANY, SOCKETS_NONE, SOCKETS_UNIX, SOCKETS_UNIX_INET, SOCKETS_TCP };

static void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void fail(const char *fmt, ...) {
  va_list ap;
  fputs("landlock-launcher: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(LAUNCHER_SETUP_FAILED);
}

static int kernel_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi >= 1) return (int)abi;
  switch (errno) {
    case ENOSYS:
      fail("Landlock unavailable: the kernel has no Landlock support (ENOSYS; needs CONFIG_SECURITY_LANDLOCK, Linux >= 5.13)");
    case EOPNOTSUPP:
      fail("Landlock unavailable: Landlock is built in but not enabled (EOPNOTSUPP; add landlock to the lsm= boot parameter)");
    case EPERM:
    case EACCES:
      fail("Landlock unavailable: a seccomp filter or container runtime blocks the Landlock syscalls (%s)", strerror(errno));
    default:
      fail("Landlock unavailable: landlock_create_ruleset failed: %s", strerror(errno));
  }
}

static uint64_t handled_fs_for(int abi) {
  uint64_t fs = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |
                LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
                LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
  if (abi >= 2) fs |= LL_FS_REFER;
  if (abi >= 3) fs |= LL_FS_TRUNCATE;
  if (abi >= 5) fs |= LL_FS_IOCTL_DEV;
  return fs;
}

/* Add a path-beneath rule; `required` paths fail closed, optional ones are skipped when absent. */
static void add_path_rule(int ruleset_fd, const char *path, uint64_t access, int required) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (!required && (errno == ENOENT || errno == ENOTDIR)) return;
    fail("cannot open %s for a Landlock rule: %s", path, strerror(errno));
  }
  struct ll_path_beneath_attr attr = {.allowed_access = access, .parent_fd = fd};
  if (syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_PATH_BENEATH, &attr, 0) != 0) {
    int saved = errno;
    close(fd);
    fail("landlock_add_rule(%s) failed: %s", path, strerror(saved));
  }
  close(fd);
}

static int is_directory(const char *path) {
  int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

static int read_cap_last_cap(void) {
  FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
  int last = -1;
  if (f != NULL) {
    if (fscanf(f, "%d", &last) != 1) last = -1;
    fclose(f);
  }
  if (last < 0 || last > 63) {
    /* /proc unreadable: probe the bounding set until the kernel says EINVAL. */
    last = -1;
    for (int cap = 0; cap <= 63; cap++) {
      if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) break;
      last = cap;
    }
    if (last < 0) fail("cannot determine the last capability (cap_last_cap): %s", strerror(errno));
  }
  return last;
}

static int has_effective_cap(int cap) {
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capget, &hdr, data) != 0) fail("capget failed: %s", strerror(errno));
  return (data[cap / 32].effective & (1U << (cap % 32))) != 0;
}

static void drop_all_capabilities(void) {
  int last = read_cap_last_cap();
  if (has_effective_cap(CAP_SETPCAP)) {
    /* Lock root out of regaining capabilities through exec or setuid. */
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                         SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
#ifdef SECBIT_NO_CAP_AMBIENT_RAISE
    bits |= SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
#endif
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) fail("PR_SET_SECUREBITS failed: %s", strerror(errno));
  }
  for (int cap = 0; cap <= last; cap++) {
    int in_set = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (in_set < 0) fail("PR_CAPBSET_READ(%d) failed: %s", cap, strerror(errno));
    if (in_set == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      fail("PR_CAPBSET_DROP(%d) failed: %s", cap, strerror(errno));
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    fail("clearing ambient capabilities failed: %s", strerror(errno));
  }
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) fail("capset(0) failed: %s", strerror(errno));
  /* Verify rather than trust. */
  memset(data, 0, sizeof data);
  if (syscall(SYS_capget, &hdr, data) != 0) fail("capget failed: %s", strerror(errno));
  for (int i = 0; i < 2; i++) {
    if (data[i].effective != 0 || data[i].permitted != 0 || data[i].inheritable != 0) {
      fail("capabilities are still held after capset(0)");
    }
  }
  for (int cap = 0; cap <= last; cap++) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 0) fail("capability %d is still in the bounding set", cap);
  }
}

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* Generic syscall numbers newer than some libc headers. */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
/* Highest syscall number this filter knows; newer ones get ENOSYS (libc falls back). */
#define HIGHEST_KNOWN_NR 466

/* Inode-flag ioctls (chattr) that work on a read-only fd of a file the caller owns. */
#define IOC_SETFLAGS 0x40086602U   /* FS_IOC_SETFLAGS (64-bit) */
#define IOC32_SETFLAGS 0x40046602U /* FS_IOC32_SETFLAGS */
#define IOC_FSSETXATTR 0x401c5820U /* FS_IOC_FSSETXATTR */

#define FILTER_MAX 96
struct filter_builder {
  struct sock_filter insns[FILTER_MAX];
  unsigned short len;
};

static void emit(struct filter_builder *b, struct sock_filter insn) {
  if (b->len >= FILTER_MAX) fail("seccomp filter too long");
  b->insns[b->len++] = insn;
}

#define RET_ERRNO(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define RET_ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

/* `if (nr == sysno) return -err;` — expects the syscall number in the accumulator. */
static void deny_syscall(struct filter_builder *b, unsigned int sysno, int err) {
  emit(b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sysno, 0, 1));
  emit(b, (struct sock_filter)RET_ERRNO(err));
}

/*
 * seccomp, for what Landlock does not govern:
 *   --deny-net: socket(2) for every family (UDP, raw, netlink, AF_UNIX …);
 *   --freeze-metadata (read-only mode): chmod, chown, utimes and xattr
 *     syscalls and the chattr ioctls, which Landlock leaves to DAC — and a
 *     file's owner may change its metadata through a read-only path;
 *   both: io_uring (its operations bypass seccomp), x32 and foreign-ABI
 *     syscalls (their numbers differ), and syscalls newer than this filter.
 */
static void install_seccomp(enum socket_policy sockets, int freeze_metadata) {
#ifndef NATIVE_AUDIT_ARCH
  (void)sockets;
  (void)freeze_metadata;
  fail("no seccomp filter for this CPU architecture (needed for network deny and read-only metadata)");
#else
  struct filter_builder b = {.len = 0};
  emit(&b, (struct sock_filter)LOAD(arch));
  emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0));
  emit(&b, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  emit(&b, (struct sock_filter)LOAD(nr));
#if defined(__x86_64__)
  emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1));
  emit(&b, (struct sock_filter)RET_ERRNO(EACCES));
#endif
  emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, HIGHEST_KNOWN_NR, 0, 1));
  emit(&b, (struct sock_filter)RET_ERRNO(ENOSYS));
  deny_syscall(&b, __NR_io_uring_setup, ENOSYS);
  deny_syscall(&b, __NR_io_uring_enter, ENOSYS);
  deny_syscall(&b, __NR_io_uring_register, ENOSYS);
  if (freeze_metadata) {
    static const unsigned int metadata_syscalls[] = {
#ifdef __NR_chmod
      __NR_chmod,
#endif
#ifdef __NR_chown
      __NR_chown,
#endif
#ifdef __NR_lchown
      __NR_lchown,
#endif
#ifdef __NR_utime
      __NR_utime,
#endif
#ifdef __NR_utimes
      __NR_utimes,
#endif
#ifdef __NR_futimesat
      __NR_futimesat,
#endif
      __NR_fchmod, __NR_fchmodat, __NR_fchmodat2, __NR_fchown, __NR_fchownat, __NR_utimensat,
      __NR_setxattr, __NR_lsetxattr, __NR_fsetxattr, __NR_removexattr, __NR_lremovexattr,
      __NR_fremovexattr, __NR_setxattrat, __NR_removexattrat,
    };
    for (size_t i = 0; i < sizeof metadata_syscalls / sizeof metadata_syscalls[0]; i++) {
      deny_syscall(&b, metadata_syscalls[i], EACCES);
    }
    /* ioctl: refuse the inode-flag setters, allow every other command. */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 6));
    emit(&b, (struct sock_filter)LOAD(args[1]));
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IOC_SETFLAGS, 3, 0));
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IOC32_SETFLAGS, 2, 0));
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IOC_FSSETXATTR, 1, 0));
    emit(&b, (struct sock_filter)RET_ALLOW);
    emit(&b, (struct sock_filter)RET_ERRNO(EACCES));
  }
  if (sockets == SOCKETS_NONE) {
    /*
     * socket(2) for every family, AF_UNIX included: Landlock cannot stop a
     * connect() to a file-system UNIX socket (docker.sock, an SSH agent), and
     * seccomp cannot read the path. socketpair(2) stays: it reaches nothing
     * outside the process tree.
     */
    deny_syscall(&b, __NR_socket, EACCES);
  } else if (sockets == SOCKETS_TCP) {
    /*
     * socket(2) only for TCP: family AF_INET or AF_INET6, type (without the
     * NONBLOCK/CLOEXEC flags) SOCK_STREAM, protocol 0 or IPPROTO_TCP — the
     * sockets Landlock's TCP rules govern. UDP, raw, netlink, AF_UNIX … are
     * refused. Jump offsets count the instructions skipped.
     */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 11));
    emit(&b, (struct sock_filter)LOAD(args[0]));                                         /* 0 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0));     /* 1 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 6));    /* 2 */
    emit(&b, (struct sock_filter)LOAD(args[1]));                                         /* 3 */
    emit(&b, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf));               /* 4 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 3)); /* 5 */
    emit(&b, (struct sock_filter)LOAD(args[2]));                                         /* 6 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0));           /* 7 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 1, 0)); /* 8 */
    emit(&b, (struct sock_filter)RET_ERRNO(EACCES));                                     /* 9 */
    emit(&b, (struct sock_filter)RET_ALLOW);                                             /* 10 */
  } else if (sockets == SOCKETS_UNIX) {
    /* socket(2) only for AF_UNIX (bwrap's network deny: no other network, host socket files masked). */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 4));
    emit(&b, (struct sock_filter)LOAD(args[0]));                                      /* 0 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0)); /* 1 */
    emit(&b, (struct sock_filter)RET_ERRNO(EACCES));                                  /* 2 */
    emit(&b, (struct sock_filter)RET_ALLOW);                                          /* 3 */
  } else if (sockets == SOCKETS_UNIX_INET) {
    /* socket(2) only for AF_UNIX, AF_INET, AF_INET6 (inside a network namespace that holds only loopback). */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 6));
    emit(&b, (struct sock_filter)LOAD(args[0]));                                       /* 0 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 3, 0));  /* 1 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0));  /* 2 */
    emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0)); /* 3 */
    emit(&b, (struct sock_filter)RET_ERRNO(EACCES));                                   /* 4 */
    emit(&b, (struct sock_filter)RET_ALLOW);                                           /* 5 */
  }
  emit(&b, (struct sock_filter)RET_ALLOW);
  struct sock_fprog prog = {.len = b.len, .filter = b.insns};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
    fail("installing the seccomp filter failed: %s", strerror(errno));
  }
#endif
}

#define USAGE                                                                                         \
  "usage: landlock-launcher [--min-abi N] [--rw DIR]... [--deny-net] [--freeze-metadata] [--sockets " \
  "none|unix|unix+inet|tcp] [--allow-tcp-connect PORT] [--bridge PORT:SOCKET] [--setenv NAME VALUE]... " \
  "[--proxy-env] [--seccomp-only] -- CMD [ARG]..."

static void usage_error(const char *what) { fail("%s (" USAGE ")", what); }

static long parse_port(const char *text, const char *flag, long lowest) {
  char *end = NULL;
  long port = strtol(text, &end, 10);
  if (end == NULL || end == text || (*end != '\0' && *end != ':') || port < lowest || port > 65535) {
    fail("%s needs a TCP port %ld-65535 (" USAGE ")", flag, lowest);
  }
  return port;
}

/* ---- the proxy bridge: 127.0.0.1:PORT inside the sandbox -> the provider's UNIX socket ---- */

/* Listen on 127.0.0.1:port (0: any free port); *bound receives the port. */
static int bridge_listen(long port, long *bound) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("--bridge: socket failed: %s", strerror(errno));
  int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    fail("--bridge: cannot listen on 127.0.0.1:%ld: %s", port, strerror(errno));
  }
  if (listen(fd, 64) != 0) fail("--bridge: listen failed: %s", strerror(errno));
  socklen_t len = sizeof addr;
  if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) fail("--bridge: getsockname failed: %s", strerror(errno));
  *bound = ntohs(addr.sin_port);
  return fd;
}

/* Copy both ways until both directions are closed. */
static void relay(int a, int b) {
  char buf[16384];
  int open_a = 1, open_b = 1;
  while (open_a || open_b) {
    struct pollfd fds[2] = {{.fd = open_a ? a : -1, .events = POLLIN}, {.fd = open_b ? b : -1, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].revents == 0) continue;
      int from = i == 0 ? a : b, to = i == 0 ? b : a;
      ssize_t n = read(from, buf, sizeof buf);
      if (n <= 0) {
        shutdown(to, SHUT_WR);
        if (i == 0) open_a = 0;
        else open_b = 0;
        continue;
      }
      for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w <= 0) {
          if (w < 0 && errno == EINTR) continue;
          return;
        }
        off += w;
      }
    }
  }
}

static void run_bridge(int listen_fd, const char *socket_path) {
  signal(SIGCHLD, SIG_IGN); /* relay processes reap themselves */
  for (;;) {
    int client = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      _exit(0);
    }
    pid_t pid = fork();
    if (pid == 0) {
      close(listen_fd);
      int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_un addr = {.sun_family = AF_UNIX};
      strncpy(addr.sun_path, socket_path, sizeof addr.sun_path - 1);
      if (upstream >= 0 && connect(upstream, (struct sockaddr *)&addr, sizeof addr) == 0) relay(client, upstream);
      _exit(0);
    }
    close(client);
  }
}

/* ---- supervision: the launcher stays as a child subreaper ---- */

static volatile sig_atomic_t command_pid = 0;

static void forward_signal(int sig) {
  if (command_pid > 0) kill((pid_t)command_pid, sig);
}

static const int FORWARDED_SIGNALS[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH};
#define FORWARDED_COUNT (sizeof FORWARDED_SIGNALS / sizeof FORWARDED_SIGNALS[0])

/* SIGKILL every current child of this process (reparented orphans included). Returns how many were found. */
static int kill_children(void) {
  int found = 0;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
  FILE *f = fopen(path, "re");
  if (f != NULL) {
    int pid;
    while (fscanf(f, "%d", &pid) == 1) {
      kill(pid, SIGKILL);
      found++;
    }
    fclose(f);
    return found;
  }
  /* No /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN off): scan /proc for our children. */
  DIR *proc = opendir("/proc");
  if (proc == NULL) return 0;
  struct dirent *entry;
  pid_t self = getpid();
  while ((entry = readdir(proc)) != NULL) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    char stat_path[300], text[512];
    snprintf(stat_path, sizeof stat_path, "/proc/%s/stat", entry->d_name);
    int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) continue;
    text[n] = '\0';
    char *close_paren = strrchr(text, ')');
    int ppid = 0;
    char state = 0;
    if (close_paren != NULL && sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 && ppid == self) {
      kill(atoi(entry->d_name), SIGKILL);
      found++;
    }
  }
  closedir(proc);
  return found;
}

/*
 * Wait for the command, reaping orphans that are reparented to us meanwhile;
 * then kill and reap whatever is left of the tree; return the command's status.
 */
static int supervise(pid_t command) {
  int command_status = 0;
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break; /* ECHILD: cannot happen before the command ended, but never spin */
    }
    if (pid == command) {
      command_status = status;
      break;
    }
  }
  command_pid = 0;
  /* Leftovers: kill every child; their children are reparented to us; repeat until none is left. */
  for (;;) {
    kill_children();
    pid_t pid = waitpid(-1, NULL, 0);
    if (pid < 0 && errno == ECHILD) break;
  }
  return command_status;
}

static void exit_like(int status) {
  fflush(NULL);
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    /* Die the same way, without a core file of the launcher. */
    struct rlimit no_core = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
  }
  _exit(LAUNCHER_SETUP_FAILED);
}

int main(int argc, char **argv) {
  const char *rw_roots[MAX_RW_ROOTS];
  int rw_count = 0;
  const char *env_names[MAX_SETENV];
  const char *env_values[MAX_SETENV];
  int env_count = 0;
  int deny_net = 0;
  int freeze_metadata = 0;
  int seccomp_only = 0;
  int proxy_env = 0;
  int sockets_given = 0;
  enum socket_policy sockets = SOCKETS_ANY;
  long allow_connect_port = 0;
  long bridge_port = 0;
  const char *bridge_socket = NULL;
  long min_abi = 1;
  int cmd_index = -1;

  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      cmd_index = i + 1;
      break;
    } else if (strcmp(arg, "--abi") == 0) {
      if (argc != 2) usage_error("--abi takes no other arguments");
      printf("%d\n", kernel_abi());
      return 0;
    } else if (strcmp(arg, "--rw") == 0) {
      if (i + 1 >= argc) usage_error("--rw needs a directory");
      const char *dir = argv[++i];
      if (dir[0] != '/') usage_error("--rw needs an absolute directory");
      if (rw_count >= MAX_RW_ROOTS) usage_error("too many --rw directories");
      rw_roots[rw_count++] = dir;
    } else if (strcmp(arg, "--deny-net") == 0) {
      deny_net = 1;
    } else if (strcmp(arg, "--freeze-metadata") == 0) {
      freeze_metadata = 1;
    } else if (strcmp(arg, "--seccomp-only") == 0) {
      seccomp_only = 1;
    } else if (strcmp(arg, "--proxy-env") == 0) {
      proxy_env = 1;
    } else if (strcmp(arg, "--sockets") == 0) {
      if (i + 1 >= argc) usage_error("--sockets needs none, unix, unix+inet or tcp");
      const char *v = argv[++i];
      if (strcmp(v, "none") == 0) sockets = SOCKETS_NONE;
      else if (strcmp(v, "unix") == 0) sockets = SOCKETS_UNIX;
      else if (strcmp(v, "unix+inet") == 0) sockets = SOCKETS_UNIX_INET;
      else if (strcmp(v, "tcp") == 0) sockets = SOCKETS_TCP;
      else usage_error("--sockets needs none, unix, unix+inet or tcp");
      sockets_given = 1;
    } else if (strcmp(arg, "--allow-tcp-connect") == 0) {
      if (i + 1 >= argc) usage_error("--allow-tcp-connect needs a port");
      allow_connect_port = parse_port(argv[++i], "--allow-tcp-connect", 1);
    } else if (strcmp(arg, "--bridge") == 0) {
      if (i + 1 >= argc) usage_error("--bridge needs PORT:SOCKET");
      const char *v = argv[++i];
      const char *colon = strchr(v, ':');
      if (colon == NULL || colon[1] != '/') usage_error("--bridge needs PORT:/absolute/socket/path");
      bridge_port = parse_port(v, "--bridge", 0);
      bridge_socket = colon + 1;
      if (strlen(bridge_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) usage_error("--bridge socket path is too long");
    } else if (strcmp(arg, "--setenv") == 0) {
      if (i + 2 >= argc) usage_error("--setenv needs NAME VALUE");
      const char *name = argv[++i];
      if (name[0] == '\0' || strchr(name, '=') != NULL) usage_error("--setenv needs a NAME without '='");
      if (env_count >= MAX_SETENV) usage_error("too many --setenv variables");
      env_names[env_count] = name;
      env_values[env_count++] = argv[++i];
    } else if (strcmp(arg, "--min-abi") == 0) {
      if (i + 1 >= argc) usage_error("--min-abi needs a number");
      char *end = NULL;
      min_abi = strtol(argv[++i], &end, 10);
      if (end == NULL || *end != '\0' || min_abi < 1 || min_abi > 1000) usage_error("--min-abi needs a number >= 1");
    } else {
      fail("unknown option '%s' (" USAGE ")", arg);
    }
  }
  if (cmd_index < 0 || cmd_index >= argc) usage_error("no command after --");
  if (deny_net) {
    if (sockets_given && sockets != SOCKETS_NONE) usage_error("--deny-net refuses every socket; it cannot be combined with --sockets");
    sockets = SOCKETS_NONE;
  }
  if (seccomp_only && (rw_count > 0 || allow_connect_port != 0 || deny_net)) {
    usage_error("--seccomp-only sets no Landlock rules: --rw, --deny-net and --allow-tcp-connect need Landlock");
  }
  if (allow_connect_port != 0 && sockets != SOCKETS_TCP && sockets != SOCKETS_UNIX_INET) {
    usage_error("--allow-tcp-connect needs --sockets tcp or unix+inet");
  }
  if (bridge_socket != NULL && sockets != SOCKETS_TCP && sockets != SOCKETS_UNIX_INET) {
    usage_error("--bridge needs --sockets tcp or unix+inet");
  }
  if (proxy_env && bridge_socket == NULL) usage_error("--proxy-env needs --bridge");

  /* The bridge's listening socket is made before any confinement (bind is then no longer allowed). */
  long bridge_bound = 0;
  int bridge_fd = bridge_socket != NULL ? bridge_listen(bridge_port, &bridge_bound) : -1;
  /* With Landlock's TCP rules, the command may connect to the bridge (and nowhere else). */
  if (bridge_fd >= 0 && allow_connect_port == 0 && !seccomp_only) allow_connect_port = bridge_bound;

  if (!seccomp_only) {
    int abi = kernel_abi();
    if (abi < min_abi) fail("kernel Landlock ABI %d is older than the required ABI %ld", abi, min_abi);
    int handle_net = deny_net || allow_connect_port != 0;
    if (handle_net && abi < 4) fail("network rules need Landlock ABI 4 (TCP rules); this kernel has ABI %d", abi);

    struct ll_ruleset_attr attr = {0};
    size_t attr_size = sizeof attr.handled_access_fs;
    attr.handled_access_fs = handled_fs_for(abi);
    if (abi >= 4) {
      attr_size = offsetof(struct ll_ruleset_attr, scoped);
      if (handle_net) attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    }
    if (abi >= 6) {
      attr_size = sizeof attr;
      attr.scoped = LL_SCOPE_SIGNAL | (sockets != SOCKETS_ANY ? LL_SCOPE_ABSTRACT_UNIX_SOCKET : 0);
    }
    int ruleset_fd = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (ruleset_fd < 0) fail("landlock_create_ruleset failed: %s", strerror(errno));

    const uint64_t fs = attr.handled_access_fs;
    /* Read and execute everywhere. */
    add_path_rule(ruleset_fd, "/", fs & (LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE), 1);
    /* The /dev/null sink shells need (a file rule: nothing else under /dev). */
    add_path_rule(ruleset_fd, "/dev/null", fs & (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV), 1);
    /* ptys: the multiplexer, every pty beneath /dev/pts, and the controlling terminal. */
    const uint64_t tty_rights = fs & (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV);
    add_path_rule(ruleset_fd, "/dev/ptmx", tty_rights, 0);
    add_path_rule(ruleset_fd, "/dev/pts", tty_rights, 0);
    add_path_rule(ruleset_fd, "/dev/tty", tty_rights, 0);
    /* Device ioctls only on the harmless character devices and terminals. */
    if (fs & LL_FS_IOCTL_DEV) {
      static const char *const ioctl_nodes[] = {"/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
      for (size_t i = 0; i < sizeof ioctl_nodes / sizeof ioctl_nodes[0]; i++) {
        add_path_rule(ruleset_fd, ioctl_nodes[i], LL_FS_IOCTL_DEV, 0);
      }
    }
    /* Everything beneath each writable root. */
    for (int i = 0; i < rw_count; i++) {
      if (!is_directory(rw_roots[i])) fail("writable root %s is not a directory: %s", rw_roots[i], strerror(errno ? errno : ENOTDIR));
      add_path_rule(ruleset_fd, rw_roots[i], fs, 1);
    }
    /* With handled_access_net set, every bind/connect is denied but the allowed port's connect. */
    if (allow_connect_port != 0) {
      struct {
        uint64_t allowed_access;
        uint64_t port;
      } __attribute__((packed)) port_rule = {.allowed_access = LL_NET_CONNECT_TCP, .port = (uint64_t)allow_connect_port};
      if (syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_NET_PORT, &port_rule, 0) != 0) {
        fail("landlock_add_rule(tcp connect %ld) failed: %s", allow_connect_port, strerror(errno));
      }
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("PR_SET_NO_NEW_PRIVS failed: %s", strerror(errno));
    drop_all_capabilities();
    if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) != 0) fail("landlock_restrict_self failed: %s", strerror(errno));
    close(ruleset_fd);
  } else {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("PR_SET_NO_NEW_PRIVS failed: %s", strerror(errno));
    drop_all_capabilities();
  }

  /* Leave the caller's session and terminal. Already leading our own session is fine. */
  if (setsid() < 0 && getsid(0) != getpid()) fail("setsid failed: %s (spawn the launcher without a process group of its own)", strerror(errno));
  for (int i = 0; i < env_count; i++) {
    if (setenv(env_names[i], env_values[i], 1) != 0) fail("setenv(%s) failed: %s", env_names[i], strerror(errno));
  }
  if (proxy_env) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%ld", bridge_bound);
    static const char *const proxy_names[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"};
    for (size_t i = 0; i < sizeof proxy_names / sizeof proxy_names[0]; i++) setenv(proxy_names[i], url, 1);
    setenv("NO_PROXY", "localhost,127.0.0.1,::1", 1);
    setenv("no_proxy", "localhost,127.0.0.1,::1", 1);
  }
  /* Orphans of the command's tree are reparented to us, so none outlives it. */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) fail("PR_SET_CHILD_SUBREAPER failed: %s", strerror(errno));

  /* Forward termination signals to the command; block them until it exists. */
  sigset_t forwarded, previous;
  sigemptyset(&forwarded);
  for (size_t i = 0; i < FORWARDED_COUNT; i++) sigaddset(&forwarded, FORWARDED_SIGNALS[i]);
  sigprocmask(SIG_BLOCK, &forwarded, &previous);
  fflush(NULL);

  if (bridge_fd >= 0) {
    pid_t bridge = fork();
    if (bridge < 0) fail("fork (bridge) failed: %s", strerror(errno));
    if (bridge == 0) {
      /* The relay needs AF_UNIX (to the proxy) and nothing else: its own filter. */
      sigprocmask(SIG_SETMASK, &previous, NULL);
      prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      install_seccomp(SOCKETS_UNIX, 0);
      run_bridge(bridge_fd, bridge_socket);
      _exit(0);
    }
    close(bridge_fd);
  }
  /* The command's filter (seccomp filters only stack, so the relay was forked first). */
  if (sockets != SOCKETS_ANY || freeze_metadata) install_seccomp(sockets, freeze_metadata);

  pid_t child = fork();
  if (child < 0) fail("fork failed: %s", strerror(errno));
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    sigprocmask(SIG_SETMASK, &previous, NULL);
    execvp(argv[cmd_index], &argv[cmd_index]);
    int saved = errno;
    fprintf(stderr, "landlock-launcher: cannot execute %s: %s\n", argv[cmd_index], strerror(saved));
    _exit(saved == ENOENT ? 127 : 126);
  }
  command_pid = child;
  struct sigaction forward = {.sa_handler = forward_signal};
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < FORWARDED_COUNT; i++) sigaction(FORWARDED_SIGNALS[i], &forward, NULL);
  sigprocmask(SIG_SETMASK, &previous, NULL);
  exit_like(supervise(child));
}
