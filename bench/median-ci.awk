# The median of numbers sorted ascending (one per line), for bench/bench.sh
# and bench/bench-switch.sh: prints "median q1 q3 lo hi", q1/q3 the
# quartiles, lo-hi a 95% confidence interval of the median that assumes
# nothing of the distribution: the j-th smallest and largest value, j the
# largest with P(Binomial(n, 1/2) < j) <= 2.5% (from 6 values on; fewer
# give min-max, at less than 95%). Prints nothing for no input.
{ a[NR] = $1 }
function q(f,  x, i) { x = 1 + (NR - 1) * f; i = int(x); return a[i] + (x - i) * (a[i + 1] - a[i]) }
END {
	if (NR == 0)
		exit
	lo = 0; p = 0.5 ^ NR; cum = p
	while (cum <= 0.025) { p *= (NR - lo) / (lo + 1); cum += p; lo++ }
	if (lo < 1)
		lo = 1
	printf "%.10g %.10g %.10g %.10g %.10g\n", q(0.5), q(0.25), q(0.75), a[lo], a[NR + 1 - lo]
}
