/* The nn kernels over one element type, instantiated twice by cpu_nn.c (no include guard):
   T is float or double, SFX names the instance (f32, f64). Sums accumulate in double. */

#define NN_CAT2(a, b) a##_##b
#define NN_CAT(a, b) NN_CAT2(a, b)
#define NN_FN(name) NN_CAT(name, SFX)

/* ---- convolution: im2col / col2im over 3 spatial dims (1-D and 2-D use size-1 dims) ---- */

static void NN_FN(im2col_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t D = a->in[0], H = a->in[1], W = a->in[2];
    const int64_t OD = a->out[0], OH = a->out[1], OW = a->out[2], L = OD * OH * OW;
    const int64_t KD = a->k[0], KH = a->k[1], KW = a->k[2], K = KD * KH * KW;
    for (int64_t pl = lo; pl < hi; pl++) {
        const int64_t ni = pl / a->c, ci = pl % a->c;
        const T *src = (const T *)a->x + pl * D * H * W;
        for (int64_t kd = 0; kd < KD; kd++)
        for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++) {
            const int64_t row = ci * K + (kd * KH + kh) * KW + kw;
            T *dst = (T *)a->y + row * a->ld + ni * L;
            for (int64_t od = 0; od < OD; od++) {
                const int64_t id = od * a->s[0] - a->p[0] + kd * a->dil[0];
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * a->s[1] - a->p[1] + kh * a->dil[1];
                    T *d = dst + (od * OH + oh) * OW;
                    if (id < 0 || id >= D || ih < 0 || ih >= H) {
                        for (int64_t ow = 0; ow < OW; ow++) d[ow] = 0;
                        continue;
                    }
                    const T *s = src + (id * H + ih) * W;
                    const int64_t off = kw * a->dil[2] - a->p[2], st = a->s[2];
                    for (int64_t ow = 0; ow < OW; ow++) {
                        const int64_t iw = ow * st + off;
                        d[ow] = (iw >= 0 && iw < W) ? s[iw] : (T)0;
                    }
                }
            }
        }
    }
}

static void NN_FN(col2im_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t D = a->in[0], H = a->in[1], W = a->in[2];
    const int64_t OD = a->out[0], OH = a->out[1], OW = a->out[2], L = OD * OH * OW;
    const int64_t KD = a->k[0], KH = a->k[1], KW = a->k[2], K = KD * KH * KW;
    for (int64_t pl = lo; pl < hi; pl++) {
        const int64_t ni = pl / a->c, ci = pl % a->c;
        T *dst = (T *)a->y + pl * D * H * W;
        for (int64_t i = 0; i < D * H * W; i++) dst[i] = 0;
        for (int64_t kd = 0; kd < KD; kd++)
        for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++) {
            const int64_t row = ci * K + (kd * KH + kh) * KW + kw;
            const T *src = (const T *)a->x + row * a->ld + ni * L;
            for (int64_t od = 0; od < OD; od++) {
                const int64_t id = od * a->s[0] - a->p[0] + kd * a->dil[0];
                if (id < 0 || id >= D) continue;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * a->s[1] - a->p[1] + kh * a->dil[1];
                    if (ih < 0 || ih >= H) continue;
                    const T *s = src + (od * OH + oh) * OW;
                    T *d = dst + (id * H + ih) * W;
                    const int64_t off = kw * a->dil[2] - a->p[2], st = a->s[2];
                    for (int64_t ow = 0; ow < OW; ow++) {
                        const int64_t iw = ow * st + off;
                        if (iw >= 0 && iw < W) d[iw] += s[ow];
                    }
                }
            }
        }
    }
}

static void NN_FN(bias_add_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    for (int64_t pl = lo; pl < hi; pl++) {
        const T v = ((const T *)a->w)[pl % a->c];
        T *y = (T *)a->y + pl * a->m;
        for (int64_t i = 0; i < a->m; i++) y[i] += v;
    }
}

static void NN_FN(bias_grad_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    for (int64_t ci = lo; ci < hi; ci++) {
        double acc = 0;
        for (int64_t ni = 0; ni < a->n; ni++) {
            const T *g = (const T *)a->g + (ni * a->c + ci) * a->m;
            for (int64_t i = 0; i < a->m; i++) acc += g[i];
        }
        ((T *)a->gw)[ci] = (T)acc;
    }
}

static void NN_FN(accumulate_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    T *y = (T *)a->y;
    const T *x = (const T *)a->x;
    for (int64_t i = lo; i < hi; i++) y[i] += x[i];
}

/* ---- pooling over 2-D planes (in[1] x in[2] -> out[1] x out[2]) ---- */

static void NN_FN(maxpool_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->in[1], W = a->in[2], OH = a->out[1], OW = a->out[2];
    for (int64_t pl = lo; pl < hi; pl++) {
        const T *x = (const T *)a->x + pl * H * W;
        T *y = (T *)a->y + pl * OH * OW;
        int64_t *ix = a->idx + pl * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++) {
            int64_t h0 = oh * a->s[1] - a->p[1];
            const int64_t h1 = h0 + (a->k[1] - 1) * a->dil[1] + 1;
            while (h0 < 0) h0 += a->dil[1];
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t w0 = ow * a->s[2] - a->p[2];
                const int64_t w1 = w0 + (a->k[2] - 1) * a->dil[2] + 1;
                while (w0 < 0) w0 += a->dil[2];
                int64_t best = h0 * W + w0;
                T bv = -(T)INFINITY;
                for (int64_t h = h0; h < h1 && h < H; h += a->dil[1])
                    for (int64_t w = w0; w < w1 && w < W; w += a->dil[2]) {
                        const T v = x[h * W + w];
                        /* NaN propagates (PyTorch's rule: each NaN takes the place) */
                        if (v > bv || v != v) {
                            bv = v;
                            best = h * W + w;
                        }
                    }
                y[oh * OW + ow] = bv;
                ix[oh * OW + ow] = best;
            }
        }
    }
}

/* The window of an average pool output and its divisor (PyTorch's rule: the window is
   clipped to the padded input for count_include_pad, then to the input). */
static inline int64_t NN_FN(avg_window)(const tl_nn_args *a, int64_t oh, int64_t ow,
                                        int64_t *h0, int64_t *h1, int64_t *w0, int64_t *w1) {
    const int64_t H = a->in[1], W = a->in[2];
    int64_t hs = oh * a->s[1] - a->p[1], ws = ow * a->s[2] - a->p[2];
    int64_t he = hs + a->k[1], we = ws + a->k[2];
    if (he > H + a->p[1]) he = H + a->p[1];
    if (we > W + a->p[2]) we = W + a->p[2];
    const int64_t pool = (he - hs) * (we - ws);
    if (hs < 0) hs = 0;
    if (ws < 0) ws = 0;
    if (he > H) he = H;
    if (we > W) we = W;
    *h0 = hs; *h1 = he; *w0 = ws; *w1 = we;
    if (a->divisor) return a->divisor;
    if (a->flag) return pool;
    return (he - hs) * (we - ws);
}

static void NN_FN(avgpool_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->in[1], W = a->in[2], OH = a->out[1], OW = a->out[2];
    for (int64_t pl = lo; pl < hi; pl++) {
        const T *x = (const T *)a->x + pl * H * W;
        T *y = (T *)a->y + pl * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t h0, h1, w0, w1;
                const int64_t div = NN_FN(avg_window)(a, oh, ow, &h0, &h1, &w0, &w1);
                double acc = 0;
                if (h0 >= h1 || w0 >= w1) { y[oh * OW + ow] = 0; continue; }
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) acc += x[h * W + w];
                y[oh * OW + ow] = (T)(acc / (double)div);
            }
    }
}

static void NN_FN(avgpool_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->in[1], W = a->in[2], OH = a->out[1], OW = a->out[2];
    for (int64_t pl = lo; pl < hi; pl++) {
        const T *g = (const T *)a->g + pl * OH * OW;
        T *y = (T *)a->y + pl * H * W;
        for (int64_t i = 0; i < H * W; i++) y[i] = 0;
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t h0, h1, w0, w1;
                const int64_t div = NN_FN(avg_window)(a, oh, ow, &h0, &h1, &w0, &w1);
                const T v = (T)((double)g[oh * OW + ow] / (double)div);
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) y[h * W + w] += v;
            }
    }
}

static void NN_FN(adapt_avg_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->in[1], W = a->in[2], OH = a->out[1], OW = a->out[2];
    for (int64_t pl = lo; pl < hi; pl++) {
        const T *x = (const T *)a->x + pl * H * W;
        T *y = (T *)a->y + pl * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++) {
            const int64_t h0 = nn_start(oh, H, OH), h1 = nn_end(oh, H, OH);
            for (int64_t ow = 0; ow < OW; ow++) {
                const int64_t w0 = nn_start(ow, W, OW), w1 = nn_end(ow, W, OW);
                double acc = 0;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) acc += x[h * W + w];
                y[oh * OW + ow] = (T)(acc / (double)((h1 - h0) * (w1 - w0)));
            }
        }
    }
}

static void NN_FN(adapt_avg_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->in[1], W = a->in[2], OH = a->out[1], OW = a->out[2];
    for (int64_t pl = lo; pl < hi; pl++) {
        const T *g = (const T *)a->g + pl * OH * OW;
        T *y = (T *)a->y + pl * H * W;
        for (int64_t i = 0; i < H * W; i++) y[i] = 0;
        for (int64_t oh = 0; oh < OH; oh++) {
            const int64_t h0 = nn_start(oh, H, OH), h1 = nn_end(oh, H, OH);
            for (int64_t ow = 0; ow < OW; ow++) {
                const int64_t w0 = nn_start(ow, W, OW), w1 = nn_end(ow, W, OW);
                const T v = (T)((double)g[oh * OW + ow] / (double)((h1 - h0) * (w1 - w0)));
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) y[h * W + w] += v;
            }
        }
    }
}

static void NN_FN(adapt_max_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->in[1], W = a->in[2], OH = a->out[1], OW = a->out[2];
    for (int64_t pl = lo; pl < hi; pl++) {
        const T *x = (const T *)a->x + pl * H * W;
        T *y = (T *)a->y + pl * OH * OW;
        int64_t *ix = a->idx + pl * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++) {
            const int64_t h0 = nn_start(oh, H, OH), h1 = nn_end(oh, H, OH);
            for (int64_t ow = 0; ow < OW; ow++) {
                const int64_t w0 = nn_start(ow, W, OW), w1 = nn_end(ow, W, OW);
                int64_t best = h0 * W + w0;
                T bv = -(T)INFINITY;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) {
                        const T v = x[h * W + w];
                        if (v > bv || v != v) {
                            bv = v;
                            best = h * W + w;
                        }
                    }
                y[oh * OW + ow] = bv;
                ix[oh * OW + ow] = best;
            }
        }
    }
}

/* Index kernels: an index outside the plane is recorded (nn_bad) and skipped. */
static void NN_FN(index_chunk)(void *ctx, int64_t lo, int64_t hi, int op) {
    tl_nn_args *a = (tl_nn_args *)ctx;
    const int64_t sp = a->sp, dp = a->dp;
    for (int64_t pl = lo; pl < hi; pl++) {
        const int64_t *ix = a->idx + pl * sp;
        T *y = (T *)a->y + pl * dp;
        for (int64_t i = 0; i < dp; i++) y[i] = 0;
        const T *s = (const T *)(op == TL_NN_INDEX_ADD ? a->g : a->x) + pl * sp;
        for (int64_t j = 0; j < sp; j++) {
            const int64_t v = ix[j];
            if (v < 0 || v >= dp) { nn_bad(a, v); continue; }
            if (op == TL_NN_INDEX_ADD) y[v] += s[j]; else y[v] = s[j];
        }
    }
}
static void NN_FN(index_add_chunk)(void *c, int64_t lo, int64_t hi) {
    NN_FN(index_chunk)(c, lo, hi, TL_NN_INDEX_ADD);
}
static void NN_FN(index_set_chunk)(void *c, int64_t lo, int64_t hi) {
    NN_FN(index_chunk)(c, lo, hi, TL_NN_INDEX_SET);
}

/* ---- batch norm over [n, c, m]: per channel ---- */

static void NN_FN(bn_fwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t N = a->n, C = a->c, M = a->m;
    const double cnt = (double)(N * M);
    for (int64_t ci = lo; ci < hi; ci++) {
        double mean, invstd;
        if (a->flag) {
            double s = 0, q = 0;
            for (int64_t ni = 0; ni < N; ni++) {
                const T *x = (const T *)a->x + (ni * C + ci) * M;
                for (int64_t i = 0; i < M; i++) s += x[i];
            }
            mean = s / cnt;
            for (int64_t ni = 0; ni < N; ni++) {
                const T *x = (const T *)a->x + (ni * C + ci) * M;
                for (int64_t i = 0; i < M; i++) { const double d = x[i] - mean; q += d * d; }
            }
            const double var = q / cnt;
            invstd = 1.0 / sqrt(var + a->eps);
            ((T *)a->mean)[ci] = (T)mean;
            ((T *)a->rstd)[ci] = (T)invstd;
            if (a->rmean) {
                T *r = (T *)a->rmean + ci;
                *r = (T)((1 - a->momentum) * (double)*r + a->momentum * mean);
            }
            if (a->rvar) {
                T *r = (T *)a->rvar + ci;
                const double unb = cnt > 1 ? q / (cnt - 1) : INFINITY;
                *r = (T)((1 - a->momentum) * (double)*r + a->momentum * unb);
            }
        } else {
            mean = (double)((const T *)a->rmean)[ci];
            invstd = 1.0 / sqrt((double)((const T *)a->rvar)[ci] + a->eps);
        }
        const double gam = a->w ? (double)((const T *)a->w)[ci] : 1.0;
        const double bet = a->b ? (double)((const T *)a->b)[ci] : 0.0;
        const double sc = gam * invstd, sh = bet - mean * sc;
        for (int64_t ni = 0; ni < N; ni++) {
            const T *x = (const T *)a->x + (ni * C + ci) * M;
            T *y = (T *)a->y + (ni * C + ci) * M;
            for (int64_t i = 0; i < M; i++) y[i] = (T)(x[i] * sc + sh);
        }
    }
}

static void NN_FN(bn_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t N = a->n, C = a->c, M = a->m;
    const double cnt = (double)(N * M);
    for (int64_t ci = lo; ci < hi; ci++) {
        double mean, invstd;
        if (a->flag) {
            mean = (double)((const T *)a->mean)[ci];
            invstd = (double)((const T *)a->rstd)[ci];
        } else {
            mean = (double)((const T *)a->rmean)[ci];
            invstd = 1.0 / sqrt((double)((const T *)a->rvar)[ci] + a->eps);
        }
        double sg = 0, sgx = 0;
        for (int64_t ni = 0; ni < N; ni++) {
            const T *x = (const T *)a->x + (ni * C + ci) * M;
            const T *g = (const T *)a->g + (ni * C + ci) * M;
            for (int64_t i = 0; i < M; i++) { sg += g[i]; sgx += g[i] * (x[i] - mean); }
        }
        if (a->gb) ((T *)a->gb)[ci] = (T)sg;
        if (a->gw) ((T *)a->gw)[ci] = (T)(sgx * invstd);
        if (!a->y) continue;
        const double gam = a->w ? (double)((const T *)a->w)[ci] : 1.0;
        const double k = gam * invstd;
        const double mg = sg / cnt, c2 = invstd * invstd * sgx / cnt;
        for (int64_t ni = 0; ni < N; ni++) {
            const T *x = (const T *)a->x + (ni * C + ci) * M;
            const T *g = (const T *)a->g + (ni * C + ci) * M;
            T *y = (T *)a->y + (ni * C + ci) * M;
            if (a->flag)
                for (int64_t i = 0; i < M; i++)
                    y[i] = (T)(k * ((double)g[i] - mg - ((double)x[i] - mean) * c2));
            else
                for (int64_t i = 0; i < M; i++) y[i] = (T)(k * (double)g[i]);
        }
    }
}

/* ---- layer / group norm: n rows of m elements ---- */

static inline double NN_FN(gamma_at)(const tl_nn_args *a, const T *w, int64_t r, int64_t e) {
    if (!w) return 1.0;
    if (a->mode == TL_NN_AFFINE_LAYER) return (double)w[e];
    return (double)w[(r % a->groups) * a->c + e / a->hw];
}

static void NN_FN(rownorm_fwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t M = a->m;
    const T *w = (const T *)a->w, *b = (const T *)a->b;
    for (int64_t r = lo; r < hi; r++) {
        const T *x = (const T *)a->x + r * M;
        T *y = (T *)a->y + r * M;
        double s = 0, q = 0;
        for (int64_t i = 0; i < M; i++) s += x[i];
        const double mean = M ? s / (double)M : 0.0;
        for (int64_t i = 0; i < M; i++) { const double d = x[i] - mean; q += d * d; }
        const double rstd = 1.0 / sqrt((M ? q / (double)M : 0.0) + a->eps);
        ((T *)a->mean)[r] = (T)mean;
        ((T *)a->rstd)[r] = (T)rstd;
        for (int64_t i = 0; i < M; i++) {
            double v = ((double)x[i] - mean) * rstd;
            if (w) v *= NN_FN(gamma_at)(a, w, r, i);
            if (b) {
                const int64_t j = a->mode == TL_NN_AFFINE_LAYER
                                      ? i : (r % a->groups) * a->c + i / a->hw;
                v += (double)b[j];
            }
            y[i] = (T)v;
        }
    }
}

static void NN_FN(rownorm_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t M = a->m;
    const T *w = (const T *)a->w;
    for (int64_t r = lo; r < hi; r++) {
        const T *x = (const T *)a->x + r * M;
        const T *g = (const T *)a->g + r * M;
        T *y = (T *)a->y + r * M;
        const double mean = (double)((const T *)a->mean)[r];
        const double rstd = (double)((const T *)a->rstd)[r];
        double s1 = 0, s2 = 0;
        for (int64_t i = 0; i < M; i++) {
            const double gx = (double)g[i] * NN_FN(gamma_at)(a, w, r, i);
            s1 += gx;
            s2 += gx * ((double)x[i] - mean) * rstd;
        }
        s1 /= (double)(M ? M : 1);
        s2 /= (double)(M ? M : 1);
        for (int64_t i = 0; i < M; i++) {
            const double gx = (double)g[i] * NN_FN(gamma_at)(a, w, r, i);
            const double xh = ((double)x[i] - mean) * rstd;
            y[i] = (T)(rstd * (gx - s1 - xh * s2));
        }
    }
}

/* layer norm's weight/bias gradients: columns [lo, hi) summed over every row in order */
static void NN_FN(layer_wgrad_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t M = a->m;
    for (int64_t e = lo; e < hi; e++) {
        double sw = 0, sb = 0;
        for (int64_t r = 0; r < a->n; r++) {
            const double mean = (double)((const T *)a->mean)[r];
            const double rstd = (double)((const T *)a->rstd)[r];
            const double gv = ((const T *)a->g)[r * M + e];
            sb += gv;
            sw += gv * (((double)((const T *)a->x)[r * M + e] - mean) * rstd);
        }
        if (a->gw) ((T *)a->gw)[e] = (T)sw;
        if (a->gb) ((T *)a->gb)[e] = (T)sb;
    }
}

/* group norm's weight/bias gradients: channel ch of every sample's group row */
static void NN_FN(group_wgrad_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t M = a->m, G = a->groups, Cg = a->c, HW = a->hw;
    for (int64_t ch = lo; ch < hi; ch++) {
        const int64_t gi = ch / Cg, j = ch % Cg;
        double sw = 0, sb = 0;
        for (int64_t ni = 0; ni < a->n / G; ni++) {
            const int64_t r = ni * G + gi;
            const double mean = (double)((const T *)a->mean)[r];
            const double rstd = (double)((const T *)a->rstd)[r];
            const T *x = (const T *)a->x + r * M + j * HW;
            const T *g = (const T *)a->g + r * M + j * HW;
            for (int64_t i = 0; i < HW; i++) {
                sb += g[i];
                sw += (double)g[i] * (((double)x[i] - mean) * rstd);
            }
        }
        if (a->gw) ((T *)a->gw)[ch] = (T)sw;
        if (a->gb) ((T *)a->gb)[ch] = (T)sb;
    }
}


/* ---- recurrent cells: one pass over the gates of each row (see cpu_nn.h for src/dst) ----
   Each row is a few plain loops over contiguous gates calling cpu_math.h's branch-free
   sigmoid, which GCC vectorizes (TL_DISPATCH: one clone per instruction set), and tanh
   over whole gate rows (NN_TANH_N: float32's array version fetches its table rows by
   permutes, where a vectorized per-element loop would gather them). */

TL_DISPATCH static void NN_FN(lstm_fwd_row)(const T *TL_RESTRICT ig, const T *TL_RESTRICT hg,
                                            const T *TL_RESTRICT ib, const T *TL_RESTRICT hb,
                                            const T *TL_RESTRICT cx, T *TL_RESTRICT hy,
                                            T *TL_RESTRICT cy, T *TL_RESTRICT ws, int64_t H) {
    const int64_t G = 4 * H;
    if (ib) {
        for (int64_t j = 0; j < G; j++) ws[j] = (ig[j] + hg[j]) + (ib[j] + hb[j]);
    } else {
        for (int64_t j = 0; j < G; j++) ws[j] = ig[j] + hg[j];
    }
    for (int64_t j = 0; j < 2 * H; j++) ws[j] = NN_SIGM(ws[j]);          /* i, f */
    NN_TANH_N(ws + 2 * H, ws + 2 * H, H);                                 /* g */
    for (int64_t j = 3 * H; j < G; j++) ws[j] = NN_SIGM(ws[j]);          /* o */
    for (int64_t j = 0; j < H; j++) cy[j] = ws[H + j] * cx[j] + ws[j] * ws[2 * H + j];
    NN_TANH_N(cy, hy, H);
    for (int64_t j = 0; j < H; j++) hy[j] = ws[3 * H + j] * hy[j];
}

static void NN_FN(lstm_fwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->m, G = 4 * H;
    for (int64_t r = lo; r < hi; r++)
        NN_FN(lstm_fwd_row)((const T *)a->src[0] + r * G, (const T *)a->src[1] + r * G,
                            a->flag ? (const T *)a->src[3] : NULL,
                            a->flag ? (const T *)a->src[4] : NULL,
                            (const T *)a->src[2] + r * H, (T *)a->dst[0] + r * H,
                            (T *)a->dst[1] + r * H, (T *)a->dst[2] + r * G, H);
}

TL_DISPATCH static void NN_FN(lstm_bwd_row)(const T *TL_RESTRICT ghy, const T *TL_RESTRICT gcy,
                                            const T *TL_RESTRICT cx, const T *TL_RESTRICT cy,
                                            const T *TL_RESTRICT ws, T *TL_RESTRICT gg,
                                            T *TL_RESTRICT gcx, int64_t H) {
    /* gcx first holds the gradient reaching cy (from cy itself and through hy); the o
       gate's slot of gg holds tanh(cy) until the gradient replaces it */
    NN_TANH_N(cy, gg + 3 * H, H);
    for (int64_t j = 0; j < H; j++) {
        const T tc = gg[3 * H + j], o = ws[3 * H + j];
        const T gh = ghy ? ghy[j] : (T)0;
        gcx[j] = (gcy ? gcy[j] : (T)0) + gh * o * ((T)1 - tc * tc);
        gg[3 * H + j] = gh * tc * o * ((T)1 - o);
    }
    for (int64_t j = 0; j < H; j++) {
        const T i = ws[j], f = ws[H + j], g = ws[2 * H + j], gc = gcx[j];
        gg[j] = gc * g * i * ((T)1 - i);
        gg[H + j] = gc * cx[j] * f * ((T)1 - f);
        gg[2 * H + j] = gc * i * ((T)1 - g * g);
        gcx[j] = gc * f;
    }
}

static void NN_FN(lstm_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->m, G = 4 * H;
    for (int64_t r = lo; r < hi; r++)
        NN_FN(lstm_bwd_row)(a->src[0] ? (const T *)a->src[0] + r * H : NULL,
                            a->src[1] ? (const T *)a->src[1] + r * H : NULL,
                            (const T *)a->src[2] + r * H, (const T *)a->src[3] + r * H,
                            (const T *)a->src[4] + r * G, (T *)a->dst[0] + r * G,
                            (T *)a->dst[1] + r * H, H);
}

TL_DISPATCH static void NN_FN(gru_fwd_row)(const T *TL_RESTRICT ig, const T *TL_RESTRICT hg,
                                           const T *TL_RESTRICT ib, const T *TL_RESTRICT hb,
                                           const T *TL_RESTRICT hx, T *TL_RESTRICT hy,
                                           T *TL_RESTRICT ws, int64_t H) {
    /* ws: r, z, n, h_n, hx */
    if (ib) {
        for (int64_t j = 0; j < 2 * H; j++) ws[j] = NN_SIGM((ig[j] + hg[j]) + (ib[j] + hb[j]));
        for (int64_t j = 2 * H; j < 3 * H; j++) {
            const T hn = hg[j] + hb[j];
            ws[H + j] = hn;
            ws[j] = (ig[j] + ib[j]) + ws[j - 2 * H] * hn;
        }
    } else {
        for (int64_t j = 0; j < 2 * H; j++) ws[j] = NN_SIGM(ig[j] + hg[j]);
        for (int64_t j = 2 * H; j < 3 * H; j++) {
            ws[H + j] = hg[j];
            ws[j] = ig[j] + ws[j - 2 * H] * hg[j];
        }
    }
    NN_TANH_N(ws + 2 * H, ws + 2 * H, H);
    for (int64_t j = 0; j < H; j++) {
        const T n = ws[2 * H + j], z = ws[H + j];
        ws[4 * H + j] = hx[j];
        hy[j] = n + z * (hx[j] - n);
    }
}

static void NN_FN(gru_fwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->m, G = 3 * H;
    for (int64_t r = lo; r < hi; r++)
        NN_FN(gru_fwd_row)((const T *)a->src[0] + r * G, (const T *)a->src[1] + r * G,
                           a->flag ? (const T *)a->src[3] : NULL,
                           a->flag ? (const T *)a->src[4] : NULL,
                           (const T *)a->src[2] + r * H, (T *)a->dst[0] + r * H,
                           (T *)a->dst[1] + r * 5 * H, H);
}

TL_DISPATCH static void NN_FN(gru_bwd_row)(const T *TL_RESTRICT gh, const T *TL_RESTRICT ws,
                                           T *TL_RESTRICT gi, T *TL_RESTRICT ghg,
                                           T *TL_RESTRICT ghx, int64_t H) {
    for (int64_t j = 0; j < H; j++) {
        const T rg = ws[j], z = ws[H + j], n = ws[2 * H + j], hn = ws[3 * H + j];
        const T hx = ws[4 * H + j], g = gh[j];
        const T gn = g * ((T)1 - z) * ((T)1 - n * n);
        const T gz = g * (hx - n) * z * ((T)1 - z);
        const T gr = gn * hn * rg * ((T)1 - rg);
        gi[j] = gr;
        gi[H + j] = gz;
        gi[2 * H + j] = gn;
        ghg[j] = gr;
        ghg[H + j] = gz;
        ghg[2 * H + j] = gn * rg;
        ghx[j] = g * z;
    }
}

static void NN_FN(gru_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t H = a->m, G = 3 * H;
    for (int64_t r = lo; r < hi; r++)
        NN_FN(gru_bwd_row)((const T *)a->src[0] + r * H, (const T *)a->src[1] + r * 5 * H,
                           (T *)a->dst[0] + r * G, (T *)a->dst[1] + r * G,
                           (T *)a->dst[2] + r * H, H);
}

/* Cross entropy, row by row: lse = max + log(sum(exp(x - max))) in double, then
   loss = (1 - ls) * w[t] * (lse - x[t]) + ls / m * sum_k w[k] * (lse - x[k]). */
static void NN_FN(xent_fwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    tl_nn_args *a = (tl_nn_args *)ctx;
    const int64_t M = a->m;
    const T *w = (const T *)a->w;
    const double ls = a->smoothing;
    T *loss = (T *)a->dst[0], *lse = (T *)a->dst[1], *rw = (T *)a->dst[2];
    for (int64_t r = lo; r < hi; r++) {
        const T *x = (const T *)a->x + r * M;
        const int64_t t = a->idx[r];
        loss[r] = lse[r] = rw[r] = (T)0;
        if (t == a->ignore_index) continue;
        if (t < 0 || t >= M) { nn_bad(a, t); continue; }
        T mx = x[0];
        for (int64_t k = 1; k < M; k++) mx = x[k] > mx || x[k] != x[k] ? x[k] : mx;
        double s = 0;
        for (int64_t k = 0; k < M; k++) s += (double)NN_EXP(x[k] - mx);
        const double l = (double)mx + log(s), wt = w ? (double)w[t] : 1.0;
        double v = (1.0 - ls) * wt * (l - (double)x[t]);
        if (ls > 0) {
            double sm = 0;
            for (int64_t k = 0; k < M; k++) sm += (w ? (double)w[k] : 1.0) * (l - (double)x[k]);
            v += ls / (double)M * sm;
        }
        loss[r] = (T)v;
        lse[r] = (T)l;
        rw[r] = (T)wt;
    }
}

/* grad_input[r, k] = g_r * (p_k * c - ls / m * w[k] - (1 - ls) * w[t] * [k == t]), with
   p = exp(x - lse) and c = (1 - ls) * w[t] + ls / m * sum(w); zero for an ignored row. */
static void NN_FN(xent_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t M = a->m;
    const T *w = (const T *)a->w, *g = (const T *)a->g, *lse = (const T *)a->src[0];
    const double ls = a->smoothing, lm = ls / (double)M;
    double wall = (double)M;
    if (w) {
        wall = 0;
        for (int64_t k = 0; k < M; k++) wall += (double)w[k];
    }
    for (int64_t r = lo; r < hi; r++) {
        const T *x = (const T *)a->x + r * M;
        T *y = (T *)a->y + r * M;
        const int64_t t = a->idx[r];
        if (t == a->ignore_index || t < 0 || t >= M) {
            for (int64_t k = 0; k < M; k++) y[k] = (T)0;
            continue;
        }
        const double gr = a->flag == 0 ? (double)g[r]
                        : a->flag == 1 ? (double)g[0] / (double)((const T *)a->rstd)[0]
                                       : (double)g[0];
        const double wt = w ? (double)w[t] : 1.0;
        const T c = (T)(gr * ((1.0 - ls) * wt + lm * wall)), l = lse[r];
        if (w) {
            const T cw = (T)(gr * lm);
            for (int64_t k = 0; k < M; k++) y[k] = NN_EXP(x[k] - l) * c - cw * w[k];
        } else {
            const T cw = (T)(gr * lm);
            for (int64_t k = 0; k < M; k++) y[k] = NN_EXP(x[k] - l) * c - cw;
        }
        y[t] -= (T)(gr * (1.0 - ls) * wt);
    }
}

/* The mask's offset of row r (see cpu_nn.h): r unravelled over the rows' shape. */
static inline int64_t NN_FN(mask_row)(const tl_nn_args *a, int64_t r) {
    int64_t off = 0;
    for (int d = a->rnd - 1; d >= 0; d--) {
        off += (r % a->rdims[d]) * a->rstr[d];
        r /= a->rdims[d];
    }
    return off;
}

static void NN_FN(msoftmax_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t M = a->m, mc = a->mcol;
    const T scale = (T)a->momentum, ninf = (T)-INFINITY;
    const int causal = a->flag & 1, zero_dead = a->flag & 2;
    for (int64_t r = lo; r < hi; r++) {
        const T *x = (const T *)a->x + r * M;
        T *y = (T *)a->y + r * M;
        const int64_t last = causal ? r % a->out[0] : M - 1;   /* the last column kept */
        const int64_t mo = a->mode ? NN_FN(mask_row)(a, r) : 0;
        T mx = ninf;
        for (int64_t j = 0; j < M; j++) {
            T v = x[j] * scale;
            if (j > last) v = ninf;
            else if (a->mode == 1 && !((const uint8_t *)a->b)[mo + j * mc]) v = ninf;
            else if (a->mode == 2) v += ((const T *)a->b)[mo + j * mc];
            y[j] = v;
            mx = v > mx || v != v ? v : mx;
        }
        if (mx == ninf) {
            const T fill = zero_dead ? (T)0 : (T)NAN;
            for (int64_t j = 0; j < M; j++) y[j] = fill;
            continue;
        }
        T s = 0;
        for (int64_t j = 0; j < M; j++) {
            y[j] = NN_EXP(y[j] - mx);
            s += y[j];
        }
        const T inv = (T)1 / s;
        for (int64_t j = 0; j < M; j++) y[j] *= inv;
    }
}

static void NN_FN(msoftmax_bwd_chunk)(void *ctx, int64_t lo, int64_t hi) {
    const tl_nn_args *a = (const tl_nn_args *)ctx;
    const int64_t M = a->m;
    const T scale = (T)a->momentum;
    for (int64_t r = lo; r < hi; r++) {
        const T *y = (const T *)a->src[0] + r * M, *g = (const T *)a->g + r * M;
        T *gx = (T *)a->dst[0] + r * M;
        T dot = 0;
        for (int64_t j = 0; j < M; j++) dot += g[j] * y[j];
        for (int64_t j = 0; j < M; j++) gx[j] = scale * y[j] * (g[j] - dot);
    }
}

#undef NN_FN
#undef NN_CAT
#undef NN_CAT2
