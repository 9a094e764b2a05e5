/* SPDX-License-Identifier: MIT */
/*
 * Values and serial references of the collective tests (ft_coll_vals.h).
 */
#include "ft_coll_vals.h"

#include <complex.h>
#include <string.h>

const struct dt_info dts[] = {
	{ FI_INT8, "int8", 1, K_INT },
	{ FI_UINT8, "uint8", 1, K_UINT },
	{ FI_INT16, "int16", 2, K_INT },
	{ FI_UINT16, "uint16", 2, K_UINT },
	{ FI_INT32, "int32", 4, K_INT },
	{ FI_UINT32, "uint32", 4, K_UINT },
	{ FI_INT64, "int64", 8, K_INT },
	{ FI_UINT64, "uint64", 8, K_UINT },
	{ FI_FLOAT, "float", sizeof(float), K_REAL },
	{ FI_DOUBLE, "double", sizeof(double), K_REAL },
	{ FI_FLOAT_COMPLEX, "float_complex", sizeof(float complex), K_CPLX },
	{ FI_DOUBLE_COMPLEX, "double_complex", sizeof(double complex), K_CPLX },
	{ FI_LONG_DOUBLE, "long_double", sizeof(long double), K_REAL },
	{ FI_LONG_DOUBLE_COMPLEX, "long_double_complex",
	  sizeof(long double complex), K_CPLX },
	{ FI_INT128, "int128", 16, K_INT },
	{ FI_UINT128, "uint128", 16, K_UINT },
};
const size_t ndts = sizeof(dts) / sizeof(dts[0]);

const enum fi_op reduce_ops[] = {
	FI_MIN, FI_MAX, FI_SUM, FI_PROD, FI_LOR, FI_LAND, FI_BOR, FI_BAND,
	FI_LXOR, FI_BXOR, FI_ATOMIC_WRITE,
};
const size_t nops = sizeof(reduce_ops) / sizeof(reduce_ops[0]);

uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* Small integers and powers of two: every reduction of them is exact. */
struct val gen(const struct dt_info *d, enum fi_op op, int r, size_t i)
{
	struct val v = { 0 };
	int64_t x = 0, y = 0;
	uint64_t h;

	switch (op) {
	case FI_SUM:
		x = (int64_t)((r * 7 + i * 13) % 19) - 9;
		y = (int64_t)((r * 3 + i * 5) % 11) - 5;
		break;
	case FI_PROD:
		x = (const int64_t[]){ 2, -1, 1, 1 }[(r + i) % 4];
		if (d->kind == K_CPLX && (r + i) % 3 == 0) {
			x = 0;
			y = 1;
		}
		break;
	case FI_MIN:
	case FI_MAX:
		x = (int64_t)((r * 37 + i * 11) % 61) - 30;
		break;
	case FI_LOR:
	case FI_LAND:
	case FI_LXOR:
		x = (r + 2 * i) % 3 == 0 ? 0 : (int64_t)((r * i) % 5 + 1);
		if (d->kind == K_CPLX && (r + i) % 2) {
			y = x;
			x = 0;
		}
		break;
	case FI_BOR:
	case FI_BAND:
	case FI_BXOR:
		h = mix((uint64_t)r * 1000003u + i * 7919u + (uint64_t)op);
		v.i = (u128)mix(h) << 64 | h;
		return v;
	default:		/* FI_ATOMIC_WRITE */
		x = r * 100 + (int64_t)(i % 50);
		break;
	}
	v.i = (u128)(__int128)x;
	v.re = (long double)x;
	v.im = (long double)y;
	return v;
}

static u128 trunc_int(const struct dt_info *d, u128 x)
{
	unsigned bits = (unsigned)d->size * 8;

	if (bits == 128)
		return x;
	x &= ((u128)1 << bits) - 1;
	if (d->kind == K_INT && (x >> (bits - 1)) & 1)
		x |= ~(((u128)1 << bits) - 1);	/* sign-extend */
	return x;
}

static bool nonzero(const struct dt_info *d, struct val v)
{
	if (d->kind == K_INT || d->kind == K_UINT)
		return trunc_int(d, v.i) != 0;
	return v.re != 0 || v.im != 0;
}

static bool less(const struct dt_info *d, struct val a, struct val b)
{
	if (d->kind == K_INT)
		return (__int128)trunc_int(d, a.i) < (__int128)trunc_int(d, b.i);
	if (d->kind == K_UINT)
		return trunc_int(d, a.i) < trunc_int(d, b.i);
	return a.re < b.re;
}

/* The serial reference: acc (op) x. */
struct val apply(const struct dt_info *d, enum fi_op op, struct val a,
			struct val b)
{
	bool ints = d->kind == K_INT || d->kind == K_UINT;
	struct val r = { 0 };
	bool t;

	switch (op) {
	case FI_MIN:
		return less(d, b, a) ? b : a;
	case FI_MAX:
		return less(d, a, b) ? b : a;
	case FI_SUM:
		r.i = a.i + b.i;
		r.re = a.re + b.re;
		r.im = a.im + b.im;
		break;
	case FI_PROD:
		r.i = a.i * b.i;
		r.re = d->kind == K_CPLX ? a.re * b.re - a.im * b.im :
					   a.re * b.re;
		r.im = a.re * b.im + a.im * b.re;
		break;
	case FI_LOR:
	case FI_LAND:
	case FI_LXOR:
		t = op == FI_LOR ? nonzero(d, a) || nonzero(d, b) :
		    op == FI_LAND ? nonzero(d, a) && nonzero(d, b) :
		    nonzero(d, a) != nonzero(d, b);
		r.i = t;
		r.re = t;
		break;
	case FI_BOR:
		r.i = a.i | b.i;
		break;
	case FI_BAND:
		r.i = a.i & b.i;
		break;
	case FI_BXOR:
		r.i = a.i ^ b.i;
		break;
	default:
		return a;	/* FI_ATOMIC_WRITE: the first (member 0) */
	}
	if (ints)
		r.i = trunc_int(d, r.i);
	return r;
}

void store(const struct dt_info *d, void *p, struct val v)
{
	switch (d->kind) {
	case K_INT:
	case K_UINT:
		memcpy(p, &v.i, d->size);	/* little endian */
		return;
	case K_REAL:
		if (d->dt == FI_FLOAT)
			*(float *)p = (float)v.re;
		else if (d->dt == FI_DOUBLE)
			*(double *)p = (double)v.re;
		else
			*(long double *)p = v.re;
		return;
	case K_CPLX:
		if (d->dt == FI_FLOAT_COMPLEX)
			*(float complex *)p = (float)v.re + (float)v.im * I;
		else if (d->dt == FI_DOUBLE_COMPLEX)
			*(double complex *)p = (double)v.re + (double)v.im * I;
		else
			*(long double complex *)p = v.re + v.im * I;
		return;
	}
}

/* Element equality: integers by bits, floating types by value (long
 * double has padding bytes that carry nothing). */
bool same(const struct dt_info *d, const void *a, const void *b)
{
	switch (d->dt) {
	case FI_FLOAT:
		return *(const float *)a == *(const float *)b;
	case FI_DOUBLE:
		return *(const double *)a == *(const double *)b;
	case FI_LONG_DOUBLE:
		return *(const long double *)a == *(const long double *)b;
	case FI_FLOAT_COMPLEX:
		return *(const float complex *)a == *(const float complex *)b;
	case FI_DOUBLE_COMPLEX:
		return *(const double complex *)a == *(const double complex *)b;
	case FI_LONG_DOUBLE_COMPLEX:
		return *(const long double complex *)a ==
		       *(const long double complex *)b;
	default:
		return !memcmp(a, b, d->size);
	}
}

/* Bytes of element i of rank r's data (collectives that move data). */
void gen_bytes(uint8_t *p, size_t esize, int r, size_t i)
{
	for (size_t j = 0; j < esize; j += 8) {
		uint64_t w = mix((uint64_t)r << 40 | i << 8 | j);

		memcpy(p + j, &w, esize - j < 8 ? esize - j : 8);
	}
}
