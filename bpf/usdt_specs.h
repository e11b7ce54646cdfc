/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbpf's USDT support with the spec table sized for the whole linked
 * modules object: probes and cycles share one table there (libbpf gives
 * out spec ids per object), where each had its own 256 before. Every
 * source must include this instead of <bpf/usdt.bpf.h> so that the weak
 * map definitions agree.
 */
#ifndef EBPF_PROF_USDT_SPECS_H
#define EBPF_PROF_USDT_SPECS_H

#define BPF_USDT_MAX_SPEC_CNT 512

#include <bpf/usdt.bpf.h>

#endif
