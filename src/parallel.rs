//! Writing one buffer from many threads, each thread at places no other writes.

/// A pointer several threads write through, each only at indices no other thread writes and no
/// one reads until they are done (the user's `unsafe` blocks state why).
#[derive(Clone, Copy)]
pub(crate) struct SharedPtr<T>(pub *mut T);

// SAFETY: a shared pointer only hands out the raw pointer; every write through it is in an
// `unsafe` block whose caller guarantees disjoint indices.
unsafe impl<T: Send> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// The pointer.
    pub fn get(self) -> *mut T {
        self.0
    }
}
