/* The dynamic loader that runs liblockstep.so as a program (`liblockstep.so
 * --serve ...`, the isolated autopilot's host): linked into the shared
 * library only, by build.rs, which defines LOCKSTEP_INTERP for the target. */
const char lockstep_interp[] __attribute__((section(".interp"), used)) = LOCKSTEP_INTERP;
