"""Welch's two-sample t test, for the reproduction reports in docs/: n, mean and sd of each sample,
the difference of the means with its 95% interval, t, the Welch-Satterthwaite degrees of freedom and
the two-sided p value. Standard library only (the t distribution through the regularised incomplete
beta function).

    python3 tools/welch.py A1,A2,A3 B1,B2,B3            # prints B - A
    python3 tools/welch.py --summary mA,sdA,nA mB,sdB,nB  # from means, sds and counts
"""
import math, sys
def betacf(a,b,x):
    MAXIT=200; EPS=3e-14; FPMIN=1e-300
    qab=a+b; qap=a+1; qam=a-1; c=1; d=1-qab*x/qap
    if abs(d)<FPMIN: d=FPMIN
    d=1/d; h=d
    for m in range(1,MAXIT+1):
        m2=2*m; aa=m*(b-m)*x/((qam+m2)*(a+m2))
        d=1+aa*d; d=FPMIN if abs(d)<FPMIN else d; c=1+aa/c; c=FPMIN if abs(c)<FPMIN else c; d=1/d; h*=d*c
        aa=-(a+m)*(qab+m)*x/((a+m2)*(qap+m2))
        d=1+aa*d; d=FPMIN if abs(d)<FPMIN else d; c=1+aa/c; c=FPMIN if abs(c)<FPMIN else c; d=1/d; de=d*c; h*=de
        if abs(de-1)<EPS: break
    return h
def ibeta(a,b,x):
    if x<=0: return 0
    if x>=1: return 1
    bt=math.exp(math.lgamma(a+b)-math.lgamma(a)-math.lgamma(b)+a*math.log(x)+b*math.log(1-x))
    return bt*betacf(a,b,x)/a if x<(a+1)/(a+b+2) else 1-bt*betacf(b,a,1-x)/b
def tcdf(t,df): x=df/(df+t*t); p=0.5*ibeta(df/2,0.5,x); return 1-p if t>0 else p
def tq(p,df):
    lo,hi=-1e3,1e3
    for _ in range(200):
        mid=(lo+hi)/2
        if tcdf(mid,df)<p: lo=mid
        else: hi=mid
    return (lo+hi)/2
def ms(x):
    m=sum(x)/len(x); s=math.sqrt(sum((v-m)**2 for v in x)/(len(x)-1)) if len(x)>1 else 0; return m,s
def welch_summary(ma,sa,na,mb,sb,nb):
    va=sa*sa/na; vb=sb*sb/nb
    d=mb-ma; se=math.sqrt(va+vb); df=(va+vb)**2/((va*va/(na-1))+(vb*vb/(nb-1)))
    t=d/se; p=2*(1-tcdf(abs(t),df)); q=tq(0.975,df)
    return d,(d-q*se,d+q*se),t,df,p
def welch(a,b):
    return welch_summary(*ms(a),len(a),*ms(b),len(b))
if __name__=='__main__':
    if sys.argv[1]=='--summary':
        A=[float(v) for v in sys.argv[2].split(',')]; B=[float(v) for v in sys.argv[3].split(',')]
        d,ci,t,df,p=welch_summary(A[0],A[1],int(A[2]),B[0],B[1],int(B[2]))
        print("B-A = %.4f, 95%% CI [%.4f, %.4f], Welch t = %.2f, df = %.2f, p = %.2g"%(d,ci[0],ci[1],t,df,p)); sys.exit(0)
    a=[float(v) for v in sys.argv[1].split(',')]; b=[float(v) for v in sys.argv[2].split(',')]
    print("A: n=%d mean %.4f sd %.4f; B: n=%d mean %.4f sd %.4f"%(len(a),*ms(a),len(b),*ms(b)))
    d,ci,t,df,p=welch(a,b); print("B-A = %.4f, 95%% CI [%.4f, %.4f], Welch t = %.2f, df = %.2f, p = %.4f"%(d,ci[0],ci[1],t,df,p))
