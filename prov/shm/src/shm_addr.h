/* SPDX-License-Identifier: MIT */
/*
 * shm endpoint addresses: FI_ADDR_STR strings "fi_shm://<name>". The name is
 * what the transport turns into a /dev/shm object, so it is restricted to a
 * small alphabet and length; anything else is refused before it reaches a
 * path.
 */
#ifndef SHM_ADDR_H
#define SHM_ADDR_H

#include <stddef.h>
#include <stdint.h>

#include "shm_region.h"

#define SHM_ADDR_PREFIX     "fi_shm://"
#define SHM_ADDR_PREFIX_LEN (sizeof(SHM_ADDR_PREFIX) - 1)
/* Every address is SHM_ADDR_LEN bytes: the string, NUL padded, so that an
 * application may pack names back to back (Open MPI copies each peer's
 * name into an array of FI_NAME_MAX-byte slots for one fi_av_insert). */
#define SHM_ADDR_LEN        64
/* Prefix + name + NUL fit SHM_ADDR_LEN. A generated region's name
 * ("weftshm-<uid>-<pid>-<24 hex>") is at most 51 characters; names chosen
 * through node/service are at most SHM_ADDR_USER_MAX, so that the
 * transport's decorated object name still fits. The full spelling of a
 * chosen name ("weftshm-<uid>-<namespace>-<name>") fits when it is at most
 * SHM_ADDR_NAME_MAX characters: always in namespace "n" with names up to
 * 30 characters (srd's), in a job's with short names only. */
#define SHM_ADDR_NAME_MAX   (SHM_ADDR_LEN - SHM_ADDR_PREFIX_LEN - 1)
#define SHM_ADDR_USER_MAX   40
#define SHM_ADDR_MAX        SHM_ADDR_LEN

/* 1 when c may appear in a name. */
int shm_name_char_ok(char c);

/* Length of the name inside an address of at most len bytes ("fi_shm://x\0"),
 * or -FI_EINVAL when it is not a valid shm address. */
int shm_addr_name_len(const void *addr, size_t len);

/* Builds "fi_shm://<name>" from node/service as fi_getinfo receives them:
 * node already an fi_shm:// address -> that address; else a service -> the
 * service (node names the host, and every peer is on this one, so both
 * sides of fabtests' "node service" / "service" convention agree).
 * -FI_ENOENT when neither names an endpoint (a host alone), -FI_EINVAL
 * when the name is malformed. Whether node is this host is the caller's
 * question. */
int shm_addr_from_node(const char *node, const char *service,
		       char *addr, size_t size);

/* "fi_shm://weftshm-<uid>-<pid>": what this process's endpoints are named
 * under when nothing names them. fi_endpoint does not take it as a name:
 * each endpoint gets its own unguessable one below it. */
int shm_addr_process(char *addr, size_t size);

/* The address of a transport region ("/weftshm-..."): the short name of
 * a chosen name in this process's namespace, else the region's full name
 * ("fi_shm://weftshm-..."), which names it from any namespace. */
int shm_addr_from_region(const char *region_name, char *addr, size_t size);
/* Always the full name: the other spelling of a chosen name of this
 * process's namespace (an application may hold either). */
int shm_addr_from_region_full(const char *region_name, char *addr,
			      size_t size);

/* The transport region name behind a valid address ("/" + name). A short
 * name is taken in this process's namespace. */
int shm_addr_to_region(const void *addr, size_t len, char *region,
		       size_t size);

/* The chosen name an address gives an endpoint to create: its short name,
 * and in ns the namespace a full chosen name
 * ("fi_shm://weftshm-<uid>-<ns>-<short>") names, or "" for this
 * process's. -FI_EINVAL for a generated region's address. */
int shm_addr_chosen(const void *addr, size_t len, char *short_name,
		    size_t size, char ns[SHM_NS_MAX + 1]);

#endif /* SHM_ADDR_H */
