//! The GPU = CPU contract for ray casts (see the module above for manifolds).
