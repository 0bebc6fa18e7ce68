/**
 * Asks the C allocator to hand the free memory it keeps back to the operating system
 * (glibc `malloc_trim(0)`, malloc_trim(3)). Takes a few milliseconds on a heap of tens of MiB.
 * @returns whether any memory was given back; always `false` where the C library is not glibc
 */
export function trim(): boolean;
/** Whether {@link trim} can give memory back here (the C library is glibc). */
export function supported(): boolean;
