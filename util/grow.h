/*
 * grow.h - the one way an array grows: room for at least `need` items,
 * the capacity doubling from a first size, the byte count checked for
 * overflow.  Every folder's growing arrays call it, so that none has its
 * own doubling loop to get wrong.
 */
#ifndef PROFSVC_GROW_H
#define PROFSVC_GROW_H

#include <stddef.h>

/* Ensures *cap >= need for the array *items of `size`-byte items: when it
 * is short, the capacity becomes `first` (16 when 0), or *cap if already
 * set, doubled until it holds need (or exactly need where doubling would
 * overflow), and *items is realloc'd to it.  0, or -1 with errno ENOMEM
 * (need * size overflows, or realloc failed) or EINVAL (size 0), *items
 * and *cap then untouched.  need <= *cap is 0 at once: nothing shrinks. */
int grow_array(void **items, size_t *cap, size_t need, size_t size, size_t first);

/* The same for a typed pointer `arr` and a size_t lvalue `cap`: the item
 * size is sizeof(*arr); GROW starts at 16, GROW_FROM at `first`. */
#define GROW_FROM(arr, cap, need, first) \
	grow_array((void **)&(arr), &(cap), (need), sizeof(*(arr)), (first))
#define GROW(arr, cap, need) GROW_FROM(arr, cap, need, 0)

#endif
