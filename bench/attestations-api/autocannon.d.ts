// The part of autocannon's API this benchmark uses (the package ships no types).
declare module "autocannon" {
  namespace autocannon {
    interface Histogram {
      average: number;
      total: number;
      p50: number;
      p99: number;
      max: number;
    }
    interface Result {
      requests: Histogram;
      latency: Histogram;
      non2xx: number;
      errors: number;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      requests?: Array<{ setupRequest?: (request: any) => any }>;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
