/** The part of `fs-native-extensions` (no types of its own) the file log uses. */
declare module 'fs-native-extensions' {
  /** Takes an exclusive lock on the open file `fd` (on Linux, an open file description lock); false when another holds one. */
  export function tryLock(fd: number, options?: { shared?: boolean }): boolean;
}
