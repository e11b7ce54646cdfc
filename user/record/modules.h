/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run's modules (rec_module.h): which ones, in what order, and their
 * start: the context they share, their open, their BPF parts loaded as one
 * object, their targets and their attach.
 */
#ifndef EBPF_PROF_RECORD_MODULES_H
#define EBPF_PROF_RECORD_MODULES_H

struct recorder;

/* After the CPU sampler is attached (its maps are the modules' to share):
 * fills the modules' context, opens every module (one that does not apply
 * stays off), loads their BPF parts, gives them the targets known so far
 * and attaches them. Returns 0 or a negative errno, logged. */
int modules_start(struct recorder *r);
/* Closes every module that is on, then what they shared: the modules'
 * BPF object, the throttling feed, the probe bus, the cycle sink. */
void modules_close(struct recorder *r);

#endif
