//! A short list kept on the stack: the per-launch argument lists, so that a launch of a kernel
//! with up to [`INLINE_ARGUMENTS`] arguments allocates nothing for them.

/// Arguments (hidden ones included) a launch keeps on the stack; longer lists spill to the heap.
pub(crate) const INLINE_ARGUMENTS: usize = 16;

/// Up to `N` copyable values in place, more on the heap.
pub(crate) struct InlineVec<T: Copy, const N: usize> {
    inline: [T; N],
    len: usize,
    /// Every value once there were more than `N` (empty until then).
    spilled: Vec<T>,
}

impl<T: Copy, const N: usize> InlineVec<T, N> {
    /// An empty list; `filler` only initializes the unused places.
    #[inline]
    pub(crate) fn new(filler: T) -> InlineVec<T, N> {
        InlineVec {
            inline: [filler; N],
            len: 0,
            spilled: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, value: T) {
        if self.spilled.is_empty() && self.len < N {
            self.inline[self.len] = value;
            self.len += 1;
            return;
        }
        if self.spilled.is_empty() {
            self.spilled.reserve(2 * N.max(1));
            self.spilled.extend_from_slice(&self.inline[..self.len]);
        }
        self.spilled.push(value);
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[T] {
        if self.spilled.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spilled
        }
    }

    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        if self.spilled.is_empty() {
            &mut self.inline[..self.len]
        } else {
            &mut self.spilled
        }
    }
}

impl<T: Copy, const N: usize> Extend<T> for InlineVec<T, N> {
    #[inline]
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.push(value);
        }
    }
}

impl<T: Copy, const N: usize> FromIterator<T> for InlineVec<T, N>
where
    T: Default,
{
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> InlineVec<T, N> {
        let mut list = InlineVec::new(T::default());
        list.extend(values);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_in_place_and_after_spilling() {
        let mut list: InlineVec<u64, 3> = InlineVec::new(0);
        assert!(list.as_slice().is_empty());
        list.extend([1, 2, 3]);
        assert_eq!(list.as_slice(), [1, 2, 3]);
        assert!(list.spilled.is_empty());
        list.push(4);
        list.extend([5, 6]);
        assert_eq!(list.as_slice(), [1, 2, 3, 4, 5, 6]);
        list.as_mut_slice()[0] = 9;
        assert_eq!(list.as_slice()[0], 9);
        let collected: InlineVec<u64, 2> = (0..5).collect();
        assert_eq!(collected.as_slice(), [0, 1, 2, 3, 4]);
        let mut empty: InlineVec<u8, 0> = InlineVec::new(0);
        empty.push(7);
        assert_eq!(empty.as_slice(), [7]);
    }
}
