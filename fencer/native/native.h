/*
 * What another backend builds on the native one (backend_native.c): the
 * vm backend runs QEMU as pid 1 of a native fence, its jail.
 * native_spec(): the spec of f's native fence (no channel, nothing
 * passed); native_started(): what its start measured, into f's state.
 */
#ifndef NATIVE_H
#define NATIVE_H

struct fence;
struct backend_boot;
struct fence_spec;
struct fence_proc;

void	native_spec(const struct fence *, const struct backend_boot *,
	    struct fence_spec *);
void	native_started(struct fence *, const struct fence_proc *);

#endif /* NATIVE_H */
